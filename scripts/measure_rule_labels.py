"""How much the rule labeller saves the judge on the demo: every line it labels, and the judge requests it spares.

Loads the demo (manage.py load_demo --flags 3 --no-runs: the synthesized calls, the bank of local candidates, the
demo's first three flags) into a throwaway SQLite database, scores the flags, then runs full-call runs with the
local engines:

- the demo's full-call runs: one run per flagged call, the bank's leader as the candidate (as the product
  starts a run from a call you flagged);
- a run over every demo call a run accepts (recorded, its live transcriber known), once per candidate; a run
  takes at most 10 calls, and the script lifts that cap for this one measurement.

No judge is needed: rule labels are made when a run compares, before the judge step. For each run it prints the
caller lines, the differing unflagged lines, those the rule labelled, the label requests the judge would get
and those the rule saved; then every rule label, live transcript against candidate with its reason, to read.

    .venv/bin/python scripts/measure_rule_labels.py            # about 5 minutes on 2 cores (local Whisper)
    .venv/bin/python scripts/measure_rule_labels.py --leader-only
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def setup(workdir: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'measure.sqlite3'}"
    os.environ["MEDIA_ROOT"] = str(workdir / "media")
    os.environ.setdefault("SECRET_KEY", "measure-rule-labels-throwaway-database")
    os.environ.pop("ANTHROPIC_API_KEY", None)  # rule labels need no judge; nothing is sent anywhere
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oncore.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_demo", flags=3, no_runs=True, verbosity=0)


def differing(run) -> list:
    """The differing unflagged lines the rule left to the judge, to read for labels the rule missed."""
    return list(
        run.lines.filter(differs=True, flag__isnull=True, candidate_failed=False, label="").order_by(
            "position"
        )
    )


def report(run, title: str) -> list:
    from transcriber_tests.models import RunLine
    from transcriber_tests.queries import runs as queries

    s = queries.run_summary(run)
    run.refresh_from_db()
    unflagged_differing = run.lines.filter(differs=True, flag__isnull=True, candidate_failed=False).count()
    print(
        f"{title}: {s.lines} caller lines, {unflagged_differing} differing unflagged, {s.rule_labelled} labelled "
        f"by rule, {s.unlabelled} left for the judge in {_requests(run)} request(s); "
        f"{run.judge_calls_saved} judge request(s) saved"
    )
    return list(run.lines.filter(label_source=RunLine.BY_RULE).order_by("position"))


def _requests(run) -> int:
    from transcriber_tests.work import runs as pipeline

    return len(pipeline.chunks(list(pipeline.to_label(run).select_related("line"))))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leader-only", action="store_true", help="the every-call run for the leader only")
    parser.add_argument(
        "--show-differing", action="store_true", help="also print the lines left to the judge"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        setup(Path(tmp))
        from oncore.calls.models import Call
        from transcriber_tests.actions import runs as actions
        from transcriber_tests.models import Bank, Flag
        from transcriber_tests.queries import runs as queries
        from transcriber_tests.queries.lines import live_transcriber_of
        from transcriber_tests.work import tasks
        from transcriber_tests.work import tasks as run_tasks

        tasks.drain()
        bank = Bank.objects.get(organization__slug="demo")
        leader = queries.default_candidate(bank)
        print(f"bank {bank.name!r}, leader {leader}")
        rule_lines = []
        flagged = Flag.objects.filter(bank=bank).values_list("line__call_id", flat=True)
        flagged_calls = list(Call.objects.filter(pk__in=list(flagged)).order_by("started_at", "pk"))
        for call in flagged_calls:
            run = actions.do_start_run(bank, [call.pk], candidate=leader, confirmed=True)
            run_tasks.drain_run(run.pk, max_seconds=1800)
            rule_lines += [
                (f"run {run.pk}", rl) for rl in report(run, f"run {run.pk} (call {call.external_id})")
            ]
        every = [
            call
            for call in Call.objects.filter(tenant__organization=bank.organization).order_by(
                "started_at", "pk"
            )
            if call.recorded and live_transcriber_of(call) is not None  # what a run accepts
        ]
        print(f"{len(every)} of the demo's calls can be run (recorded, live transcriber known)")
        actions.MAX_CALLS = len(every)  # this measurement only: the demo has more calls than a run takes
        candidates = (
            [leader] if args.leader_only else [c.transcriber for c in bank.candidates.order_by("position")]
        )
        for candidate in candidates:
            run = actions.do_start_run(bank, [c.pk for c in every], candidate=candidate, confirmed=True)
            run_tasks.drain_run(run.pk, max_seconds=3600)
            title = f"run {run.pk} (every demo call, {candidate})"
            rule_lines += [(f"run {run.pk}", rl) for rl in report(run, title)]
            if args.show_differing:
                for rl in differing(run):
                    print(f"    left to the judge: {rl.live_text!r} | {rl.candidate_text!r}")
        print(f"flags in the bank: {Flag.objects.filter(bank=bank).count()}")
        print("every rule label (live | candidate | reason):")
        for where, rl in rule_lines:
            print(
                f"  {where} call {rl.line.call.external_id} line {rl.line.position}: {rl.live_text!r} | "
                f"{rl.candidate_text!r} | {rl.reasoning}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
