"""Transcriber testing's tables, one module per part: banks (banks, candidates, flags, controls, transcriptions,
scores), totals (the per-day totals of the scores), runs (the judge's picks and full-call runs), snapshots (a
bank's figures, and the call page's flag boxes, computed when what they show changes)."""

from .banks import MAX_CANDIDATES, STANDARD_TAGS, Bank, Candidate, ControlLine, Flag, Score, Transcription
from .detail import CallPairTotal, CallTotal, ConfusionTotal
from .history import FlagEdit
from .runs import JudgePick, Run, RunCall, RunLine, RunPattern
from .snapshots import FlagBox, Snapshot
from .totals import (
    EntityTotal,
    FlagTotal,
    GroupPairTotal,
    GroupTotal,
    LatencyTotal,
    PairTotal,
    ScoreTotal,
    TagTotal,
)

__all__ = [
    "CallPairTotal",
    "CallTotal",
    "ConfusionTotal",
    "FlagBox",
    "FlagEdit",
    "MAX_CANDIDATES",
    "STANDARD_TAGS",
    "Bank",
    "Candidate",
    "ControlLine",
    "Flag",
    "FlagTotal",
    "GroupPairTotal",
    "GroupTotal",
    "JudgePick",
    "EntityTotal",
    "LatencyTotal",
    "PairTotal",
    "Run",
    "RunCall",
    "RunLine",
    "RunPattern",
    "Score",
    "ScoreTotal",
    "Snapshot",
    "TagTotal",
    "Transcription",
]
