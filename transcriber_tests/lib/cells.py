"""One transcriber's score on one item (a flagged line or a control line) as every surface shows it: the turn
table, a flag's results on the call page, the API and its webhook events, the CSV files. One type, read from the
Score rows' values (a page has hundreds of cells, a CSV file millions: no model is built for them)."""

from typing import NamedTuple

from .scoring import NO_TEXT

WAITING, SCORED, FAILED = "waiting", "scored", "failed"

# The Score columns a cell is read from, after the item's keys (flag, control, transcriber).
KEYS = ("flag_id", "control_id", "transcriber_id")
COLUMNS = (
    "hypothesis",
    "failed",
    "failure",
    "match",
    "wer",
    "case_or_punctuation_only",
    "normalizer_version",
    "substitutions",
    "deletions",
    "insertions",
    "latency_s",
    "alignment",
    "entities",
)


class ScoreCell(NamedTuple):
    """`state`: waiting (no score yet: its transcription is queued or running), scored (`match`, `wer`), or failed
    (`failure`: "error", no text came back, or "no text", a text with no words; `reason` says why where it is
    known: the engine's error). `text` is the transcriber's text as it came back ("" after an error). A tuple:
    the turn-table CSV builds millions."""

    transcriber_id: int
    state: str
    text: str = ""
    failure: str = ""
    match: bool = False
    wer: float | None = None
    case_or_punctuation_only: bool = False
    normalizer_version: str = ""
    reason: str = ""
    # The edits WER counts (scoring.score_line); alignment.align on the expected text and `text` marks them.
    substitutions: int = 0
    deletions: int = 0
    insertions: int = 0
    # The transcription's latency (for a streaming replay its time to final); None for the live transcript,
    # which is scored as stored, and for a text that never came back.
    latency_s: float | None = None
    # Its words aligned against the expected text, as the score keeps it (alignment.encode_steps; "" when failed).
    alignment: str = ""
    # The expected text's entities, each kept or lost in `text`, as the score keeps them (lib.entities.encode; ""
    # when failed or when what was said has none).
    entities: str = ""

    @property
    def waiting(self) -> bool:
        return self.state == WAITING

    @property
    def failed(self) -> bool:
        return self.state == FAILED

    @property
    def scored(self) -> bool:
        return self.state == SCORED


def waiting(transcriber_id: int) -> ScoreCell:
    return ScoreCell(transcriber_id, WAITING)


def cell(
    transcriber_id: int,
    hypothesis,
    failed,
    failure,
    match,
    wer,
    noted,
    normalizer_version,
    substitutions=0,
    deletions=0,
    insertions=0,
    latency_s=None,
    alignment="",
    entities="",
) -> ScoreCell:
    """The cell of one Score row's COLUMNS."""
    if failed:
        reason = "its text had no words" if failure == NO_TEXT else ""
        return ScoreCell(
            transcriber_id,
            FAILED,
            hypothesis,
            failure,
            normalizer_version=normalizer_version,
            reason=reason,
            latency_s=latency_s,
        )
    return ScoreCell(
        transcriber_id,
        SCORED,
        hypothesis,
        "",
        match,
        wer,
        noted,
        normalizer_version,
        "",
        substitutions,
        deletions,
        insertions,
        latency_s,
        alignment,
        entities or "",
    )


def of_score(score) -> ScoreCell:
    """The cell of a Score already loaded."""
    return cell(score.transcriber_id, *(getattr(score, c) for c in COLUMNS))


def with_reason(found: ScoreCell, reason: str) -> ScoreCell:
    """A failed cell with the engine's error as its reason (where the score alone cannot say why)."""
    return found._replace(reason=reason) if found.failed and reason else found
