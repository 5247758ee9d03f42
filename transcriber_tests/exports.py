"""CSV exports, streamed row by row so a large bank never sits in memory. UTF-8 with a BOM (spreadsheets then
read accents right), a header row, and cells that a spreadsheet would run as a formula are neutralized."""

import csv

from django.db.models import F, Q
from django.http import StreamingHttpResponse
from django.utils.text import slugify

from . import queries
from .models import Flag, JudgePick, Score

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


TURN_FIELDS = (
    "flag_id", "control_id", "flag__line__call_id", "flag__line_id", "control__line_id",
    "flag__line__call__tenant__name", "flag__line__call__started_at", "flag__created_at", "flag__tags",
    "flag__expected_text", "control__expected_text", "flag__line__text", "control__line__text",
    "transcriber__display_name", "source", "hypothesis", "failed", "match", "wer", "case_or_punctuation_only",
    "normalizer_version",
)


def turn_csv_rows(bank, window_days):
    """One row per item and transcriber (live and candidates), in the turn table's order. Plain tuples from the
    database (no model instances), read in chunks: flat memory and tens of thousands of rows a second."""
    window_days = queries.clamp_window(window_days)
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    scores = queries.bank_scores(bank, window_days).filter(
        Q(source=Score.CANDIDATE, transcriber_id__in=candidate_ids) | Q(source=Score.LIVE)
    )
    scores = scores.order_by(
        "-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True), "source", "transcriber_id"
    ).values_list(*TURN_FIELDS)
    # The judge's picks are few (items where candidates matched but wrote the line differently): one query.
    picks = {
        (flag_id, control_id): (name, reasoning)
        for flag_id, control_id, name, reasoning in JudgePick.objects.filter(
            flag__bank=bank, chosen__isnull=False
        ).values_list("flag_id", "control_id", "chosen__display_name", "reasoning")
    }
    for (flag_id, control_id, call_id, flag_line_id, control_line_id, tenant, started_at, flagged_at, tags,
         flag_expected, control_expected, flag_line_text, control_line_text, transcriber, source, hypothesis,
         failed, match, wer, noted, normalizer_version) in scores.iterator(chunk_size=5000):
        pick_name, pick_reasoning = picks.get((flag_id, control_id), ("", ""))
        is_control = control_id is not None
        yield [
            flag_id, "control" if is_control else "flag", control_id if is_control else "", call_id,
            control_line_id if is_control else flag_line_id, tenant, started_at.isoformat(), flagged_at.isoformat(),
            " ".join(Flag.decode_tags(tags)), control_expected if is_control else flag_expected,
            control_line_text if is_control else flag_line_text, transcriber, source, hypothesis,
            "yes" if failed else "no", "" if failed else ("yes" if match else "no"), _fmt(wer),
            "yes" if noted else "no", normalizer_version, pick_name, pick_reasoning,
        ]


def turns_csv(bank, window_days):
    return stream_csv(f"{slugify(bank.name)}-turns.csv", TURN_COLUMNS, turn_csv_rows(bank, window_days))
