import csv
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from benchmark.entity import actions, reports, scoring
from benchmark.models import BenchmarkRun
from oncore.templatetags.oncore_tags import percent

from ._common import OPERATOR_ONLY


class Command(BaseCommand):
    help = (
        "Score a benchmark run: writes the per-span hits CSV, the summary JSON and the run manifest, and "
        "prints the headline (entity accuracy, MLCommons, tier A, n=...). --compare lists, span by span, "
        "what this run found and another missed (another run, or a hits CSV such as a reference run's), and "
        "the reverse. Refuses to run while the entity matcher fails its self-test. " + OPERATOR_ONLY
    )

    def add_arguments(self, parser):
        parser.add_argument("run", type=int, help="Run id.")
        parser.add_argument(
            "--compare",
            metavar="OTHER",
            help="Another run id on the same dataset, or a hits CSV file (PATH.hits.csv: the columns are in "
            "docs/benchmark.md), e.g. a reference run's.",
        )
        parser.add_argument(
            "--tiers", default="A", choices=["A", "B", "AB"], help="Spans scored (default A)."
        )
        parser.add_argument("--out", type=Path, help="Folder for the outputs (default var/benchmark/).")
        parser.add_argument(
            "--allow-incomplete",
            action="store_true",
            help="Score a run that still has clips to transcribe (they count as missed).",
        )

    def handle(self, run, compare, tiers, out, allow_incomplete, **options):
        bench_run = self._run(run)
        hits = other = None
        if compare and (not compare.isdigit() or Path(compare).is_file()):
            hits = self._hits(Path(compare))
        elif compare:
            other = self._run(int(compare))
        if other is not None and other.dataset_id != bench_run.dataset_id:
            raise CommandError(
                f"Runs {run} and {compare} are on different datasets; spans cannot be compared."
            )
        out = out or Path(settings.VAR_DIR) / "benchmark"
        try:
            card = actions.score_run(bench_run, tiers=tiers, allow_incomplete=allow_incomplete)
            if other is not None:
                actions.score_run(other, tiers=tiers, allow_incomplete=allow_incomplete)
        except actions.ScoringRefused as exc:
            raise CommandError(str(exc)) from None
        bench_run.refresh_from_db()
        paths = actions.write_outputs(bench_run, card, out)
        self._print_card(bench_run, card)
        for kind, path in paths.items():
            self.stdout.write(f"  {kind}: {path}")
        if other is not None:
            other.refresh_from_db()
            self._print_diff(bench_run, other, tiers, out)
        if hits is not None:
            self._print_diff(bench_run, hits, tiers, out)

    def _run(self, pk) -> BenchmarkRun:
        try:
            return BenchmarkRun.objects.select_related("dataset", "transcriber").get(pk=pk)
        except BenchmarkRun.DoesNotExist:
            raise CommandError(f"There is no benchmark run {pk}.") from None

    def _hits(self, path: Path) -> actions.HitsFile:
        if not path.is_file():
            raise CommandError(f"--compare {path}: there is no such run id or file.")
        try:
            return actions.read_hits_csv(path.read_text(encoding="utf-8-sig"), path.name)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CommandError(str(exc)) from None

    def _print_card(self, run, card: scoring.Scorecard) -> None:
        d = run.dataset
        w = self.stdout.write
        w(
            f"Run {run.pk}: {run.system_name} ({run.model or 'no model string'}) on {d.name} {d.version} "
            f"revision {d.revision}, matcher {card.matcher_version}"
        )
        w(card.headline_text)
        for a in card.by_subset:
            w(f"  {a.label}: {percent(a.accuracy)} ({a.found}/{a.n})")
        w(f"  by type (tier {card.tiers}, all subsets):")
        for a in card.by_type:
            w(f"    {a.label}: {percent(a.accuracy)} ({a.found}/{a.n})")
        tiers = ", ".join(f"tier {a.label} {percent(a.accuracy)} (n={a.n})" for a in card.by_tier)
        w(f"  all subsets: {tiers} (tier A+B is not comparable to tier A)")
        w(f"  WER pooled over {card.wer.clips} transcribed clips: {percent(card.wer.wer)}")
        c = card.coverage
        w(
            f"  clips: {c.clips}, transcribed {c.transcribed}, without a hypothesis {c.without_hypothesis} "
            f"({c.spans_on_clips_without_hypothesis} tier {card.tiers} spans on them, counted as missed), "
            f"zero entities {c.zero_entity_clips}, excluded at import {run.dataset.excluded_count}"
        )

    def _print_diff(self, a, b, tiers, out: Path) -> None:
        """The span diff of run `a` against run `b` or a hits file `b`, printed and written as a CSV."""
        is_file = isinstance(b, actions.HitsFile)
        try:
            result = reports.span_diff_with_file(a, b, tiers) if is_file else reports.span_diff(a, b, tiers)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        diff = result.diff

        def name(side) -> str:
            return side if isinstance(side, str) else f"run {side}"

        w = self.stdout.write
        if is_file:
            described = f"the hits file {b.name} (it does not say which matcher scored it)"
        else:
            described = f"run {b.pk} ({b.system_name})"
        w(
            f"Compared with {described}, tier {result.tiers}: both found {diff.both_found}, "
            f"both missed {diff.both_missed}, only {name(a.pk)} found {len(diff.only_a)}, "
            f"only {name(result.run_b)} found {len(diff.only_b)}."
        )
        for spans, finder, misser, heard in result.sides():
            w(f"Found by {name(finder)}, missed by {name(misser)} ({len(spans)}):")
            for r in spans:
                said = heard.get(r.clip_id)
                w(
                    f"  {r.span_id} [{r.type} {r.tier}] {r.text!r} -- {name(misser)} heard: "
                    + (repr(said) if said is not None else "nothing (no hypothesis)")
                )
        out.mkdir(parents=True, exist_ok=True)
        other = b.name.removesuffix(".csv").removesuffix(".hits") if is_file else f"run-{b.pk}"
        path = out / f"{a.label}-vs-{other}.diff.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(reports.DIFF_COLUMNS)
            writer.writerows(result.csv_rows())
        w(f"  diff: {path}")
