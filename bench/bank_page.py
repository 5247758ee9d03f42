"""A bank of N flags x 8 candidates (each flag with one control: 18 scores a flag), and the server time of the
results page (uncached), the turn table's first page, its "only where candidates disagree" page and the turn-table
CSV export, each beside the same thing done the old way (before the per-day totals) in the same run, as a ratio.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/oncore_bench .venv/bin/python bench/bank_page.py --flags 10000
    DATABASE_URL=... .venv/bin/python bench/bank_page.py --flags 100000      # 1.8 million scores

It creates and drops its own test database (test_<name>), so it never touches real data. The old way is the
queries the results page and turn table ran before (kept here, patched in for its turn): every score of the bank
aggregated per request, the paired test joining the two candidates' scores, costs and the waiting count over
every line of the bank, the control mix over every flag, the turn table counted and filtered over every item.
"Uncached": before each request the bank's results_changed_at moves, as every score write moves it, so the cached
results miss as under a steady stream of flags. Targets on PostgreSQL at 10,000 and 100,000 flags: results page
uncached median <= 30 ms, turn table page 1 <= 60 ms, "disagree" <= 100 ms, turn-table CSV >= 100,000 rows/s with
flat memory."""

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from contextlib import contextmanager
from itertools import islice
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-for-a-throwaway-database")
os.environ.setdefault("ALLOWED_HOSTS", "testserver")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.db.models import Count, F, IntegerField, Max, Min, OuterRef, Q, Subquery, Sum  # noqa: E402
from django.db.models.functions import Cast, Coalesce  # noqa: E402
from django.utils import timezone  # noqa: E402

from oncore.csv import safe_cell, stream_csv  # noqa: E402
from oncore.transcribers.models import Transcriber  # noqa: E402
from transcriber_tests import exports, jobs, queries, scoring  # noqa: E402
from transcriber_tests.models import Bank, ControlLine, Flag, JudgePick, Score, Transcription  # noqa: E402

CANDIDATES = 8

# ---------------------------------------------------------------- the old way (the queries before the totals)


def old_summaries(bank_id, since, until=None):
    scores = Score.objects.filter(flag__bank_id=bank_id, flag__created_at__gte=since)
    if until:
        scores = scores.filter(flag__created_at__lt=until)
    rows = scores.values("source", "transcriber_id").annotate(
        n_scored=Count("id", filter=Q(failed=False)),
        n_matches=Count("id", filter=Q(failed=False, match=True)),
        n_failed=Count("id", filter=Q(failed=True)),
        wer_units=Sum("wer_units", filter=Q(failed=False)),
    )
    summaries = {
        (r["source"], r["transcriber_id"]): scoring.summary_row(
            r["transcriber_id"], r["n_scored"], r["n_matches"], r["n_failed"], int(r["wer_units"] or 0)
        )
        for r in rows
    }
    bank = Bank.objects.get(pk=bank_id)
    return summaries, old_candidate_costs(bank, bank.candidates.values_list("transcriber_id", flat=True))


_PAIRS = """
SELECT l.match AS lm, r.match AS rm
FROM transcriber_tests_score l
JOIN transcriber_tests_score r ON {join}
  AND r.transcriber_id = %s AND r.source = 'candidate' AND NOT r.failed
JOIN transcriber_tests_flag f ON f.id = l.flag_id
WHERE {item} AND l.transcriber_id = %s AND l.source = 'candidate' AND NOT l.failed
  AND f.bank_id = %s AND f.created_at >= %s
"""
OLD_LEAD_SQL = (
    "SELECT COUNT(*), COALESCE(SUM(CASE WHEN lm AND NOT rm THEN 1 ELSE 0 END), 0), "
    "COALESCE(SUM(CASE WHEN rm AND NOT lm THEN 1 ELSE 0 END), 0) FROM ("
    + _PAIRS.format(join="r.flag_id = l.flag_id AND r.control_id IS NULL", item="l.control_id IS NULL")
    + " UNION ALL "
    + _PAIRS.format(join="r.control_id = l.control_id", item="l.control_id IS NOT NULL")
    + ") pairs"
)


def old_lead_test(bank, since, leader_id, runner_up_id, until=None):
    with connection.cursor() as cursor:
        params = [runner_up_id, leader_id, bank.pk, since]
        cursor.execute(OLD_LEAD_SQL, params + params)
        both, b, c = (int(x) for x in cursor.fetchone())
    p = scoring.mcnemar_exact(b, c)
    return scoring.LeadTest(both, b, c, p, p < 0.05 and b > c)


def _on_bank_lines(bank):
    flag_lines = Flag.objects.filter(bank=bank).values("line_id")
    control_lines = ControlLine.objects.filter(flag__bank=bank).values("line_id")
    return Q(line_id__in=flag_lines) | Q(line_id__in=control_lines)


def old_candidate_costs(bank, transcriber_ids):
    rows = (
        Transcription.objects.filter(
            _on_bank_lines(bank), transcriber_id__in=transcriber_ids, status=Transcription.DONE
        )
        .values("transcriber_id")
        .annotate(total=Sum("cost"))
    )
    return {r["transcriber_id"]: r["total"] or 0 for r in rows}


def old_pending_for_bank(bank, transcriber_ids):
    return Transcription.objects.filter(
        _on_bank_lines(bank),
        organization_id=bank.organization_id,
        status__in=jobs.ACTIVE,
        transcriber_id__in=transcriber_ids,
    ).count()


def old_control_mix(bank, since, until=None):
    per_flag = (
        ControlLine.objects.filter(flag=OuterRef("pk"))
        .order_by()
        .values("flag")
        .annotate(n=Count("id"))
        .values("n")
    )
    rows = (
        Flag.objects.filter(bank=bank, created_at__gte=since)
        .annotate(n_controls=Coalesce(Subquery(per_flag), 0))
        .order_by()
        .values("n_controls")
        .annotate(flags=Count("id"))
        .values_list("n_controls", "flags")
    )
    return tuple(sorted(rows, key=lambda row: (-row[1], row[0])))


def _old_disagreeing(bank, since):
    ids = bank.candidates.values("transcriber_id")
    scored = Score.objects.filter(
        source=Score.CANDIDATE,
        failed=False,
        transcriber_id__in=ids,
        flag__bank=bank,
        flag__created_at__gte=since,
    )
    as_int = Cast("match", IntegerField())

    def split(qs, key):
        return qs.values(key).annotate(lo=Min(as_int), hi=Max(as_int)).filter(lo__lt=F("hi")).values(key)

    return Q(control__isnull=True, flag_id__in=split(scored.filter(control__isnull=True), "flag_id")) | Q(
        control_id__in=split(scored.filter(control__isnull=False), "control_id")
    )


def old_turn_items(bank, window_days, *, kind="", tag="", disagree=False):
    since = queries.window_start(queries.clamp_window(window_days))
    items = Score.objects.filter(source=Score.LIVE, flag__bank=bank, flag__created_at__gte=since)
    if disagree:
        items = items.filter(_old_disagreeing(bank, since))
    return items.order_by("-flag__created_at", "-flag_id", F("control_id").asc(nulls_first=True)).values_list(
        "id", flat=True
    )


OLD = {
    (queries.aggregates, "summaries"): old_summaries,
    (queries, "lead_test"): old_lead_test,
    (queries, "pending_for_bank"): old_pending_for_bank,
    (queries, "control_mix"): old_control_mix,
    (queries, "turn_items"): old_turn_items,
}


@contextmanager
def the_old_way():
    kept = {key: getattr(*key) for key in OLD}
    for (module, name), old in OLD.items():
        setattr(module, name, old)
    try:
        yield
    finally:
        for (module, name), new in kept.items():
            setattr(module, name, new)


# ---------------------------------------------------------------- measuring


def timed_get(client, url, repeats, bank=None):
    """Median server time of a GET. With `bank`, each request first moves the bank's results_changed_at, as every
    score write does, so the cached results miss as they do under a stream of flags (the uncached path)."""
    times = []
    for _ in range(repeats):
        if bank is not None:
            Bank.objects.filter(pk=bank.pk).update(results_changed_at=timezone.now())
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return statistics.median(times)


def export(client, url):
    rows, size = -1, 0  # less the header row
    for chunk in client.get(url).streaming_content:
        rows += chunk.count(b"\n")
        size += len(chunk)
    return rows, size


def csv_figures(client, url):
    """(rows, bytes, seconds, peak traced memory): a first pass traces memory (and warms up), a second is timed."""
    tracemalloc.start()
    export(client, url)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = time.perf_counter()
    rows, size = export(client, url)
    return rows, size, time.perf_counter() - start, peak


def line(what, new, old, unit="ms", target=None, higher_is_better=False):
    ratio = (new / old if higher_is_better else old / new) if new and old else float("nan")
    met = ""
    if target is not None:
        ok = new >= target if higher_is_better else new <= target
        met = (
            f"   target {'>=' if higher_is_better else '<='} {target:,} {unit}: {'met' if ok else 'NOT met'}"
        )
    print(f"{what:28} new {new:10,.1f} {unit}   old {old:10,.1f} {unit}   {ratio:7.1f}x{met}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flags", type=int, default=10_000, help="flags in the bank (each with one control)")
    parser.add_argument("--repeats", type=int, default=15, help="requests per figure (median)")
    args = parser.parse_args()

    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from django.contrib.auth import get_user_model
        from django.test import Client

        from oncore.accounts.models import Membership, Organization
        from transcriber_tests.synthetic import fill_bank

        org = Organization.objects.create(name="Bench", slug="bench")
        user = get_user_model().objects.create_user("bench-admin", password="x")
        Membership.objects.create(user=user, organization=org, role="admin")
        start = time.perf_counter()
        bank = fill_bank(org, flags=args.flags, candidates=CANDIDATES, name="Bench")
        fill_s = time.perf_counter() - start
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:  # what autovacuum does to a settled table
                cursor.execute("VACUUM ANALYZE")
        n_scores = Score.objects.filter(flag__bank=bank).count()
        print(
            f"database: {connection.vendor}; bank: {args.flags:,} flags + {args.flags:,} controls x {CANDIDATES} "
            f"candidates + live = {n_scores:,} scores (filled in {fill_s:.0f} s); medians of {args.repeats} "
            f"requests, server time; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        client = Client()
        client.force_login(user)
        urls = {
            "results page, uncached": (f"/banks/{bank.pk}/", bank, 30),
            "turn table, page 1": (f"/banks/{bank.pk}/turns/", None, 60),
            "turn table, disagree": (f"/banks/{bank.pk}/turns/?disagree=1", None, 100),
        }
        for what, (url, uncached, target) in urls.items():
            timed_get(client, url, 2, uncached)  # warm up
            new = timed_get(client, url, args.repeats, uncached)
            with the_old_way():
                old = timed_get(client, url, max(3, args.repeats // 3), uncached)
            line(what, new, old, target=target)

        csv_url = f"/banks/{bank.pk}/turns.csv"
        rows, size, elapsed, peak = csv_figures(client, csv_url)
        with the_old_way(), old_turn_csv():
            old_rows, _, old_elapsed, old_peak = csv_figures(client, csv_url)
        assert old_rows == rows, (old_rows, rows)
        line(
            "turn-table CSV", rows / elapsed, old_rows / old_elapsed, "rows/s", 100_000, higher_is_better=True
        )
        print(
            f"{'':28} {rows:,} rows, {size / 1e6:.1f} MB; peak traced Python memory while streaming "
            f"{peak / 1e6:.1f} MB (old {old_peak / 1e6:.1f} MB)"
        )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


OLD_FLAG_BATCH = 1000


def old_turn_csv_rows(bank, window_days):
    """exports.turn_csv_rows as it was: flags in batches, their controls and scores looked up by flag id."""
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
        .iterator(chunk_size=OLD_FLAG_BATCH)
    )
    for batch in iter(lambda: list(islice(flags, OLD_FLAG_BATCH)), []):
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
                cells = exports._item_cells(
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
                        exports._fmt(wer),
                        "yes" if noted else "no",
                        normalizer_version,
                        *pick,
                    ]


@contextmanager
def old_turn_csv():
    """The turn-table CSV as it was written before (rows as lists, each cell encoded per row)."""
    kept = exports.turns_csv
    exports.turns_csv = lambda bank, window_days: stream_csv(
        "turns.csv", exports.TURN_COLUMNS, old_turn_csv_rows(bank, window_days), cells_safe=True
    )
    try:
        yield
    finally:
        exports.turns_csv = kept


if __name__ == "__main__":
    main()
