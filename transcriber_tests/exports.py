"""The transcriber-testing CSV downloads (results, turn table, a full-call run's lines), the dashboard's and the
API's alike. They are streamed by oncore.csv, so a large bank never sits in memory. Times, money and positions
are written as the API's JSON writes them (oncore.formats; positions from 0); the columns keep the dashboard's
word for the production transcript: live."""

from itertools import islice

from django.db.models import Q
from django.utils.text import slugify

from oncore.csv import safe_cell, stream_csv
from oncore.formats import iso_time, money
from oncore.transcribers.models import Transcriber

from . import queries
from .models import ControlLine, Flag, JudgePick, Score

RESULTS_COLUMNS = [
    "bank",
    "window_days",
    "row",
    "position",
    "transcriber",
    "provider",
    "model",
    "scored",
    "matches",
    "failed",
    "accuracy",
    "wilson_low",
    "wilson_high",
    "mean_wer",
    "leader",
    "clears_threshold",
    "threshold",
    "audio_cost_usd",
]

TURN_COLUMNS = [
    "flag_id",
    "item",
    "control_id",
    "call_id",
    "line_id",
    "tenant",
    "call_started_at",
    "flagged_at",
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
    "case_or_punctuation_only",
    "normalizer_version",
    "judge_pick",
    "judge_reasoning",
]


def _fmt(x, places=4):
    return "" if x is None else round(x, places)


def results_rows(bank, window_days):
    r = queries.bank_results(bank, window_days)
    for card in r.cards:
        s, t = card.summary, card.transcriber
        lo, hi = card.interval or (None, None)
        yield [
            bank.name,
            r.window_days,
            "candidate",
            card.position,
            t.display_name,
            t.provider,
            t.model,
            s.scored,
            s.matches,
            s.failed,
            _fmt(s.accuracy),
            _fmt(lo),
            _fmt(hi),
            _fmt(s.mean_wer),
            "yes" if card.is_leader else "no",
            ("yes" if r.leader_clears_threshold else "no") if card.is_leader else "",
            float(bank.threshold),
            money(card.cost),
        ]
    for t, s, interval in r.live_rows:
        lo, hi = interval or (None, None)
        yield [
            bank.name,
            r.window_days,
            "live (reference)",
            "",
            t.display_name,
            t.provider,
            t.model,
            s.scored,
            s.matches,
            s.failed,
            _fmt(s.accuracy),
            _fmt(lo),
            _fmt(hi),
            _fmt(s.mean_wer),
            "",
            "",
            float(bank.threshold),
            "",
        ]


def results_csv(bank, window_days):
    return stream_csv(f"{slugify(bank.name)}-results.csv", RESULTS_COLUMNS, results_rows(bank, window_days))


FLAG_BATCH = 1000  # flags (with their controls and scores) loaded per round of queries


def _item_cells(
    flag_id, control_id, call_id, line_id, tenant, started_at, flagged_at, tags, expected, live_text
):
    """The cells every row of one item (a flag or one of its controls) starts with, text cells made safe."""
    is_control = control_id is not None
    return [
        flag_id,
        "control" if is_control else "flag",
        control_id if is_control else "",
        call_id,
        line_id,
        safe_cell(tenant),
        iso_time(started_at),
        iso_time(flagged_at),
        safe_cell(" ".join(Flag.decode_tags(tags))),
        safe_cell(expected),
        safe_cell(live_text),
    ]


def turn_csv_rows(bank, window_days):
    """One row per item and transcriber (live and candidates), in the turn table's order: newest flag first, each
    flag before its controls, and within an item candidates then live, each by transcriber id. Flags are read in
    batches; each batch's controls and scores are then read by flag id (an index lookup, no sort of the whole
    bank's scores), so memory stays flat. Cells come back already safe for a spreadsheet."""
    since = queries.window_start(queries.clamp_window(window_days))
    candidate_ids = list(bank.candidates.values_list("transcriber_id", flat=True))
    names = {}  # transcriber id -> safe display name, filled as new ids appear (live transcribers vary by call)
    picks = {
        (flag_id, control_id): (safe_cell(name), safe_cell(reasoning))
        for flag_id, control_id, name, reasoning in JudgePick.objects.filter(
            flag__bank=bank, chosen__isnull=False
        ).values_list("flag_id", "control_id", "chosen__display_name", "reasoning")
    }
    flags = (
        Flag.objects.filter(bank=bank, created_at__gte=since)
        .order_by("-created_at", "-id")
        .values_list(
            "id",
            "line__call_id",
            "line_id",
            "line__call__tenant__name",
            "line__call__started_at",
            "created_at",
            "tags",
            "expected_text",
            "line__text",
        )
        .iterator(chunk_size=FLAG_BATCH)
    )
    for batch in iter(lambda: list(islice(flags, FLAG_BATCH)), []):
        flag_ids = [f[0] for f in batch]
        controls = {}
        for control_id, flag_id, line_id, expected, live_text in (
            ControlLine.objects.filter(flag_id__in=flag_ids)
            .order_by("id")
            .values_list("id", "flag_id", "line_id", "expected_text", "line__text")
        ):
            controls.setdefault(flag_id, []).append((control_id, line_id, expected, live_text))
        scores = {}
        for flag_id, control_id, *rest in (
            Score.objects.filter(flag_id__in=flag_ids)
            .filter(Q(source=Score.CANDIDATE, transcriber_id__in=candidate_ids) | Q(source=Score.LIVE))
            .values_list(
                "flag_id",
                "control_id",
                "source",
                "transcriber_id",
                "hypothesis",
                "failed",
                "failure",
                "match",
                "wer",
                "case_or_punctuation_only",
                "normalizer_version",
            )
        ):
            scores.setdefault((flag_id, control_id), []).append(rest)
        missing = {r[1] for rows in scores.values() for r in rows} - names.keys()
        if missing:
            names.update(
                (pk, safe_cell(name))
                for pk, name in Transcriber.objects.filter(pk__in=missing).values_list("id", "display_name")
            )
        for flag_id, call_id, line_id, tenant, started_at, flagged_at, tags, expected, live_text in batch:
            items = [(None, line_id, expected, live_text), *controls.get(flag_id, ())]
            for control_id, item_line_id, item_expected, item_live_text in items:
                item_scores = scores.get((flag_id, control_id))
                if not item_scores:
                    continue
                cells = _item_cells(
                    flag_id,
                    control_id,
                    call_id,
                    item_line_id,
                    tenant,
                    started_at,
                    flagged_at,
                    tags,
                    item_expected,
                    item_live_text,
                )
                pick = picks.get((flag_id, control_id), ("", ""))
                item_scores.sort(key=lambda r: (r[0], r[1]))  # source, then transcriber id
                for (
                    source,
                    transcriber_id,
                    hypothesis,
                    failed,
                    failure,
                    match,
                    wer,
                    noted,
                    normalizer_version,
                ) in item_scores:
                    yield [
                        *cells,
                        names[transcriber_id],
                        source,
                        safe_cell(hypothesis),
                        "yes" if failed else "no",
                        failure,
                        "" if failed else ("yes" if match else "no"),
                        _fmt(wer),
                        "yes" if noted else "no",
                        normalizer_version,
                        *pick,
                    ]


def turns_csv(bank, window_days):
    return stream_csv(
        f"{slugify(bank.name)}-turns.csv", TURN_COLUMNS, turn_csv_rows(bank, window_days), cells_safe=True
    )


RUN_LINE_COLUMNS = [
    "run_id",
    "candidate",
    "bank",
    "call_id",
    "tenant",
    "line_id",
    "line_position",
    "start_s",
    "end_s",
    "flagged",
    "expected_text",
    "live_text",
    "candidate_text",
    "candidate_failed",
    "candidate_error",
    "differs",
    "label",
    "label_source",
    "reasoning",
    "pattern",
    "candidate_wer",
    "live_wer",
    "calibration",
    "replay_text",
    "replay_matches",
    "in_review_sample",
    "review",
]


def _yes(value) -> str:
    return "" if value is None else ("yes" if value else "no")


def run_csv_rows(run):
    lines = run.lines.select_related("line__call__tenant", "pattern").order_by("position")
    for rl in lines.iterator(chunk_size=1000):
        line = rl.line
        yield [
            run.pk,
            run.candidate.display_name,
            run.bank_name,
            line.call_id,
            line.call.tenant.name,
            line.pk,
            line.position,
            line.start_s,
            line.end_s,
            _yes(bool(rl.expected_text)),
            rl.expected_text,
            rl.live_text,
            rl.candidate_text,
            _yes(rl.candidate_failed) if rl.compared else "",
            rl.candidate_error,
            _yes(rl.differs) if rl.compared else "",
            rl.label,
            rl.label_source,
            rl.reasoning,
            rl.pattern.name if rl.pattern else "",
            _fmt(rl.candidate_wer),
            _fmt(rl.live_wer),
            _yes(rl.calibration),
            rl.replay_text,
            _yes(rl.replay_matches),
            _yes(rl.in_review),
            {True: "agree", False: "disagree"}.get(rl.review_agrees, ""),
        ]


def run_csv(run):
    return stream_csv(
        f"run-{run.pk}-{slugify(run.candidate.display_name)}.csv", RUN_LINE_COLUMNS, run_csv_rows(run)
    )
