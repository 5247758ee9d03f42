"""A full-call run's figures beside its counts, as GET /runs/{id} and GET /runs/{id}/lines show them: the fixes
and breaks as shares with their 95% intervals and the net with its sign test (queries/runs.py RunSummary.tally), and
a run line's words aligned against what was said or against the production transcript (alignment.align)."""

from typing import Literal

from ninja import Field, Schema

from ..lib import alignment
from .turns import AlignedWord


class Interval(Schema):
    low: float
    high: float


class FixesAndBreaks(Schema):
    lines: int = Field(
        description="Lines whose outcome is known: identical ones, and differing ones with a label. Fixes and "
        "breaks are shares of these."
    )
    fix_rate: float | None
    fix_interval: Interval | None = Field(description="95% Wilson interval of fix_rate.")
    break_rate: float | None
    break_interval: Interval | None = Field(description="95% Wilson interval of break_rate.")
    net: int = Field(description="fixes - breaks.")
    sign_test_p: float = Field(description="Exact two-sided sign test of fixes against breaks.")
    net_clear: bool = Field(description="sign_test_p < 0.05 and the net is not zero.")
    differing: int = Field(description='"Lines that differ: differing of with_text".')
    with_text: int = Field(description="Compared lines on which the candidate produced text.")


def _interval(pair):
    return None if pair is None else {"low": pair[0], "high": pair[1]}


def fixes_and_breaks(s) -> dict:
    """From a queries/runs.py RunSummary."""
    t = s.tally
    return {
        "lines": t.lines,
        "fix_rate": t.fix_rate,
        "fix_interval": _interval(t.fix_interval),
        "break_rate": t.break_rate,
        "break_interval": _interval(t.break_interval),
        "net": t.net,
        "sign_test_p": t.sign_p,
        "net_clear": t.net_clear,
        "differing": s.differing,
        "with_text": s.with_text,
    }


class LineAlignment(Schema):
    """The fields a run line gains: merged into RunLineOut."""

    candidate_alignment: list[AlignedWord] | None = Field(
        description="The candidate's words against what was said (flagged lines) or against the production "
        "transcript (other lines whose texts differ); null otherwise."
    )
    aligned_against: Literal["expected", "production"] | None
    candidate_substitutions: int | None = Field(
        description="Against what was said, on flagged lines the candidate has text for: WER's S (and D, I)."
    )
    candidate_deletions: int | None
    candidate_insertions: int | None


NONE = {
    "candidate_alignment": None,
    "aligned_against": None,
    "candidate_substitutions": None,
    "candidate_deletions": None,
    "candidate_insertions": None,
}


def _steps(found) -> list[dict]:
    return [{"op": s.kind, "expected": s.expected or None, "heard": s.heard or None} for s in found.steps]


def line_alignment(rl) -> dict:
    """A run line's candidate words against what was said, or against the production transcript where nothing
    was flagged and the texts differ; its S, D and I against what was said."""
    text = rl.candidate_text
    if not rl.compared or rl.candidate_failed or not alignment.has_words(text):
        return dict(NONE)
    if rl.expected_text and alignment.has_words(rl.expected_text):
        found = alignment.align(rl.expected_text, text)
        return {
            "candidate_alignment": _steps(found),
            "aligned_against": "expected",
            "candidate_substitutions": found.substitutions,
            "candidate_deletions": found.deletions,
            "candidate_insertions": found.insertions,
        }
    if rl.differs and alignment.has_words(rl.live_text):
        return {
            **NONE,
            "candidate_alignment": _steps(alignment.align(rl.live_text, text)),
            "aligned_against": "production",
        }
    return dict(NONE)
