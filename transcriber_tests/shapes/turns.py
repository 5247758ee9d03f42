"""The turn table as the API, the flag.scored event and the turn-table CSV show it: a score cell, the judge's
pick and a row (queries.turns.TurnRow)."""

from datetime import datetime
from typing import Literal

from ninja import Field, Schema

from oncore.csv import csv_line, safe_cell
from oncore.formats import iso_time

from ..lib import alignment, entities
from ..lib.cells import ScoreCell
from ..models import Score
from ..queries.turns import TurnRow
from .refs import TenantRef, tenant_ref


class AlignedWord(Schema):
    op: Literal["equal", "substitution", "deletion", "insertion"]
    expected: str | None = Field(description="The expected text's word as written; null for an insertion.")
    heard: str | None = Field(description="The transcriber's word as written; null for a deletion.")


class EntityMark(Schema):
    text: str = Field(description="The entity as the expected text writes it.")
    category: Literal["name", "time", "date", "number", "id"]
    kept: bool = Field(
        description="Its text has it (the entity benchmark's matcher finds it there), or lost it."
    )


class Cell(Schema):
    transcriber_id: int
    scored: bool = Field(description="false while its transcription is queued or running.")
    text: str | None = Field(description="Its text as it came back; null while waiting or after an error.")
    failed: bool = Field(description="A failed line: counted under failed, left out of the division.")
    failure: Literal["error", "no text"] | None = Field(
        description='Why it failed: "error" (no text came back) or "no text" (a text with no words after '
        "normalization); null when it was scored or is waiting."
    )
    match: bool | None
    wer: float | None
    case_or_punctuation_only: bool
    substitutions: int | None = Field(
        description="Words of the expected text it heard as another word (WER's S); null unless scored."
    )
    deletions: int | None = Field(
        description="Words of the expected text it left out (D); null unless scored."
    )
    insertions: int | None = Field(description="Words it added (I); null unless scored.")
    latency_s: float | None = Field(
        description="Seconds from sending the line to its text; for a streaming candidate (its mode in the "
        "bank's candidates) the time to final, from the end of the caller's speech. Null for the production "
        "transcript (scored as stored), while waiting, and when no text came back."
    )
    alignment: list[AlignedWord] | None = Field(
        description="Its words against the expected text, in order, from the alignment WER counts (its "
        "substitutions, deletions and insertions are the counts above); null unless scored."
    )
    entities: list[EntityMark] | None = Field(
        description="The entities of the expected text (names, times, dates, numbers, ids), in the order said, each "
        "kept or lost in its text; null unless scored. Added in 2.1.0."
    )


class PickOut(Schema):
    transcriber_id: int | None = Field(
        description="The version chosen; null when the judge failed (see error)."
    )
    text: str
    reasoning: str
    error: str


class TurnOut(Schema):
    flag_id: int
    control_id: int | None = Field(description="Set on a control line, null on the flagged line itself.")
    kind: Literal["flag", "control"]
    line_id: int
    call_id: int
    tenant: TenantRef = Field(description="The call's tenant, as every other payload names one.")
    call_started_at: datetime
    flagged_at: datetime
    joined_at: datetime = Field(
        description="When the flag joined the bank (made in it, or moved in): it counts in the window from that day."
    )
    tags: list[str] = Field(description="The flag's error tags; empty on a control line, which carries none.")
    expected_text: str
    production: Cell = Field(description="The production transcript (the live one), scored as stored.")
    cells: list[Cell] = Field(description="One per candidate, in the candidates' order.")
    judge_pick: PickOut | None = Field(
        description="Where two or more candidates matched but wrote the line differently: the version the judge "
        "says fits the business best. It never changes a score."
    )


def alignment_out(stored: str) -> list[dict]:
    """The words of a scored text against the expected text, as its score keeps them (alignment.encode_steps)."""
    return [
        {"op": kind, "expected": expected or None, "heard": heard or None}
        for kind, expected, heard in alignment.decode_steps(stored)
    ]


def cell_out(transcriber_id: int, cell: ScoreCell | None, expected: str | None = None) -> dict:
    """A score cell (None, or a waiting one, while its transcription is queued or running), with its words
    aligned against `expected` when it is given and the cell was scored."""
    if cell is None or cell.waiting:
        return {
            "transcriber_id": transcriber_id,
            "scored": False,
            "text": None,
            "failed": False,
            "failure": None,
            "match": None,
            "wer": None,
            "case_or_punctuation_only": False,
            "substitutions": None,
            "deletions": None,
            "insertions": None,
            "latency_s": None,
            "alignment": None,
            "entities": None,
        }
    scored = not cell.failed
    return {
        "transcriber_id": transcriber_id,
        "scored": True,
        "text": None if cell.failure == Score.ERROR else cell.text,
        "failed": cell.failed,
        "failure": cell.failure or None,
        "match": None if cell.failed else cell.match,
        "wer": None if cell.failed else cell.wer,
        "case_or_punctuation_only": cell.case_or_punctuation_only,
        "substitutions": cell.substitutions if scored else None,
        "deletions": cell.deletions if scored else None,
        "insertions": cell.insertions if scored else None,
        "latency_s": cell.latency_s,
        "alignment": alignment_out(cell.alignment) if scored and expected else None,
        "entities": [m._asdict() for m in entities.decode(cell.entities)] if scored else None,
    }


def pick_out(pick) -> dict | None:
    if pick is None:
        return None
    return {
        "transcriber_id": pick.chosen_id,
        "text": pick.chosen_text,
        "reasoning": pick.reasoning,
        "error": pick.error,
    }


def turn_out(row: TurnRow) -> dict:
    return {
        "flag_id": row.flag_id,
        "control_id": row.control_id,
        "kind": "control" if row.is_control else "flag",
        "line_id": row.line_id,
        "call_id": row.call_id,
        "tenant": tenant_ref(row.tenant),
        "call_started_at": row.call_started_at,
        "flagged_at": row.flagged_at,
        "joined_at": row.joined_at,
        "tags": row.tags,
        "expected_text": row.expected_text,
        "production": cell_out(row.production.transcriber_id, row.production, row.expected_text),
        "cells": [cell_out(t.pk, cell, row.expected_text) for t, cell in row.cells],
        "judge_pick": pick_out(row.pick),
    }


# ---------------------------------------------------------------- the turn-table CSV

TURN_COLUMNS = [
    "flag_id",
    "item",
    "control_id",
    "call_id",
    "line_id",
    "tenant",
    "call_started_at",
    "flagged_at",
    "joined_bank_at",
    "tags",
    "expected_text",
    "live_text",
    "transcriber",
    "source",
    "text",
    "failed",
    "failure",
    "match",
    "wer",
    "substitutions",
    "deletions",
    "insertions",
    "latency_s",
    "case_or_punctuation_only",
    "normalizer_version",
    "judge_pick",
    "judge_reasoning",
]


def _places(x, places=4):
    return "" if x is None else round(x, places)


def row_cells(row: TurnRow) -> list:
    """The cells every CSV line of one item starts with (TURN_COLUMNS up to live_text), text made safe for a
    spreadsheet."""
    return [
        row.flag_id,
        "control" if row.is_control else "flag",
        "" if row.control_id is None else row.control_id,
        row.call_id,
        row.line_id,
        safe_cell(row.tenant.name),
        iso_time(row.call_started_at),
        iso_time(row.flagged_at),
        iso_time(row.joined_at),
        safe_cell(" ".join(row.tags)),
        safe_cell(row.expected_text),
        safe_cell(row.live_text),
    ]


def score_cells(source: str, cell: ScoreCell) -> list:
    """A scored cell's CSV cells, from `source` to `normalizer_version` (the transcriber's name goes before)."""
    return [
        source,
        safe_cell(cell.text),
        "yes" if cell.failed else "no",
        cell.failure,
        "" if cell.failed else ("yes" if cell.match else "no"),
        _places(cell.wer),
        "" if cell.failed else cell.substitutions,
        "" if cell.failed else cell.deletions,
        "" if cell.failed else cell.insertions,
        _places(cell.latency_s, 3),
        "yes" if cell.case_or_punctuation_only else "no",
        cell.normalizer_version,
    ]


def score_csv(source: str, cell: ScoreCell) -> str:
    """A score's CSV cells (score_cells) encoded, without the line's end: worked out once when the score is
    written (Score.csv_cells), so the turn-table CSV joins them as they are."""
    return csv_line(score_cells(source, cell))[:-2]


def pick_cells(pick) -> list:
    """The judge's pick (only a chosen version; a failed pick leaves the columns empty)."""
    if pick is None or pick.chosen_id is None:
        return ["", ""]
    return [safe_cell(pick.chosen.display_name), safe_cell(pick.reasoning)]
