"""CSV exports, streamed row by row so a large bank never sits in memory. UTF-8 with a BOM (spreadsheets then
read accents right), a header row, and cells that a spreadsheet would run as a formula are neutralized."""

import csv

from django.db.models import F
from django.http import StreamingHttpResponse
from django.utils.text import slugify

from . import queries
from .models import JudgePick, Score

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

RESULTS_COLUMNS = [
    "bank", "window_days", "row", "position", "transcriber", "provider", "model", "scored", "matches", "failed",
    "accuracy", "wilson_low", "wilson_high", "mean_wer", "leader", "clears_threshold", "threshold", "audio_cost_usd",
]

TURN_COLUMNS = [
    "flag_id", "item", "control_id", "call_id", "line_id", "tenant", "call_started_at", "flagged_at", "tags",
    "expected_text", "live_text", "transcriber", "source", "text", "failed", "match", "wer",
    "case_or_punctuation_only", "normalizer_version", "judge_pick", "judge_reasoning",
]


def safe_cell(value):
    """Prefix a text cell that starts like a formula with an apostrophe, so a spreadsheet shows it as text."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


class _Echo:
    def write(self, value):
        return value


def stream_csv(filename: str, header: list[str], rows) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def generate():
        yield "\ufeff" + writer.writerow(header)
        for row in rows:
            yield writer.writerow([safe_cell(v) for v in row])

    response = StreamingHttpResponse(generate(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _fmt(x, places=4):
    return "" if x is None else round(x, places)


def results_rows(bank, window_days):
    r = queries.bank_results(bank, window_days)
    for card in r.cards:
        s, t = card.summary, card.transcriber
        lo, hi = card.interval or (None, None)
        yield [bank.name, r.window_days, "candidate", card.position + 1, t.display_name, t.provider, t.model,
               s.scored, s.matches, s.failed, _fmt(s.accuracy), _fmt(lo), _fmt(hi), _fmt(s.mean_wer),
               "yes" if card.is_leader else "no",
               ("yes" if r.leader_clears_threshold else "no") if card.is_leader else "",
               bank.threshold, card.cost]
    for t, s, interval in r.live_rows:
        lo, hi = interval or (None, None)
        yield [bank.name, r.window_days, "live (reference)", "", t.display_name, t.provider, t.model, s.scored,
               s.matches, s.failed, _fmt(s.accuracy), _fmt(lo), _fmt(hi), _fmt(s.mean_wer), "", "", bank.threshold, ""]


def results_csv(bank, window_days):
    return stream_csv(f"{slugify(bank.name)}-results.csv", RESULTS_COLUMNS, results_rows(bank, window_days))


def turn_csv_rows(bank, window_days):
    """One row per item and transcriber (live and candidates), in the turn table's order."""
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    scores = (
        queries.bank_scores(bank, queries.clamp_window(window_days))
        .filter(transcriber_id__in=candidate_ids, source=Score.CANDIDATE)
        | queries.bank_scores(bank, queries.clamp_window(window_days)).filter(source=Score.LIVE)
    )
    scores = (
        scores.select_related("flag__line__call__tenant", "control__line", "transcriber")
        .order_by("-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True), "source", "transcriber_id")
    )
    # The judge's picks are few (items where candidates matched but wrote the line differently): one query.
    picks = {
        (p.flag_id, p.control_id): p
        for p in JudgePick.objects.filter(flag__bank=bank, chosen__isnull=False).select_related("chosen")
    }
    for s in scores.iterator(chunk_size=2000):
        flag, control = s.flag, s.control
        pick = picks.get((flag.pk, control.pk if control else None))
        line = control.line if control else flag.line
        call = flag.line.call
        yield [
            flag.pk, "control" if control else "flag", control.pk if control else "", call.pk, line.pk,
            call.tenant.name, call.started_at.isoformat(), flag.created_at.isoformat(), " ".join(flag.tag_list),
            control.expected_text if control else flag.expected_text, line.text, s.transcriber.display_name,
            s.source, s.hypothesis, "yes" if s.failed else "no", "" if s.failed else ("yes" if s.match else "no"),
            _fmt(s.wer), "yes" if s.case_or_punctuation_only else "no", s.normalizer_version,
            pick.chosen.display_name if pick else "", pick.reasoning if pick else "",
        ]


def turns_csv(bank, window_days):
    return stream_csv(f"{slugify(bank.name)}-turns.csv", TURN_COLUMNS, turn_csv_rows(bank, window_days))
