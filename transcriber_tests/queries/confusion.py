"""Each candidate's confusion pairs over a window: the substitutions, deletions and insertions it makes most often
("for → four" x12), from the per-day confusion totals (aggregates.detail: a few rows per candidate, day and pair,
whatever the bank's size), for the results page, the API and the confusion-pairs CSV. A pair links to the turn
table's lines where it happens (turns.with_pair)."""

from dataclasses import dataclass

from django.db.models import F, Sum, Window
from django.db.models.functions import RowNumber

from ..lib import alignment
from ..models import Bank, ConfusionTotal
from .board import candidates_of
from .window import clamp_window, window_start

TOP = 8  # pairs per candidate on the results page
API_TOP = 100  # at most, per candidate, in the API

KIND_OF_CODE = {code: kind for kind, code in alignment.KIND_CODES.items()}


@dataclass(frozen=True, slots=True)
class Pair:
    kind: str  # alignment.SUBSTITUTION, DELETION or INSERTION
    expected_word: str  # "" for an insertion
    heard_word: str  # "" for a deletion
    n: int

    @property
    def token(self) -> str:
        """The pair as the turn table's filter and the API name it: "s:for>four"."""
        return alignment.pair_token(self.kind, self.expected_word, self.heard_word)

    @property
    def label(self) -> str:
        """ "for → four", "the → (left out)", "(added) → uh": how a page writes it."""
        if self.kind == alignment.DELETION:
            return f"{self.expected_word} → (left out)"
        if self.kind == alignment.INSERTION:
            return f"(added) → {self.heard_word}"
        return f"{self.expected_word} → {self.heard_word}"


@dataclass(frozen=True)
class CandidatePairs:
    transcriber: object
    pairs: list  # Pair, most frequent first (ties: substitutions, deletions, insertions, then by words)
    errors: int  # every substitution, deletion and insertion it made in the window


def _ranked(bank: Bank, since, transcriber_ids, kind: str, limit: int | None):
    rows = (
        ConfusionTotal.objects.filter(bank=bank, day__gte=since.date(), transcriber_id__in=transcriber_ids)
        .values("transcriber_id", "kind", "expected_word", "heard_word")
        .annotate(total=Sum("n"))
        .filter(total__gt=0)
    )
    if kind:
        rows = rows.filter(kind=alignment.KIND_CODES[kind])
    if limit is not None:
        rows = rows.annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("transcriber_id")],
                order_by=[F("total").desc(), F("kind").desc(), F("expected_word"), F("heard_word")],
            )
        ).filter(rank__lte=limit)
    return rows.order_by("transcriber_id", "-total", "-kind", "expected_word", "heard_word")


def _errors(bank: Bank, since, transcriber_ids, kind: str) -> dict:
    rows = ConfusionTotal.objects.filter(bank=bank, day__gte=since.date(), transcriber_id__in=transcriber_ids)
    if kind:
        rows = rows.filter(kind=alignment.KIND_CODES[kind])
    return dict(rows.values("transcriber_id").annotate(n=Sum("n")).values_list("transcriber_id", "n"))


def confusion_pairs(
    bank: Bank,
    window_days: int,
    *,
    transcriber_id: int | None = None,
    kind: str = "",
    limit: int | None = TOP,
) -> list[CandidatePairs]:
    """Each candidate's (or one candidate's) most frequent pairs in the window, `limit` at most (None: all), of one
    kind if given: the bank's candidates, then two queries of the per-day totals ("s" sorts before "i" and "d" in
    reverse, so ties list substitutions first)."""
    since = window_start(clamp_window(window_days), bank.organization.zone)
    transcribers = [c.transcriber for c in candidates_of(bank)]
    if transcriber_id is not None:
        transcribers = [t for t in transcribers if t.pk == transcriber_id]
    ids = [t.pk for t in transcribers]
    found: dict[int, list] = {}
    for row in _ranked(bank, since, ids, kind, limit):
        found.setdefault(row["transcriber_id"], []).append(
            Pair(KIND_OF_CODE[row["kind"]], row["expected_word"], row["heard_word"], int(row["total"]))
        )
    errors = _errors(bank, since, ids, kind)
    return [CandidatePairs(t, found.get(t.pk, []), int(errors.get(t.pk) or 0)) for t in transcribers]
