from datetime import date
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.entity.actions import HypothesesRefused, import_hypotheses

from ._common import OPERATOR_ONLY, add_dataset_arguments, get_dataset, on_off


class Command(BaseCommand):
    help = (
        'Import a system\'s hypotheses from JSONL as a finished run. One line per clip: {"clip_id": ..., '
        '"hypothesis": ..., "system": ..., "model": ..., "formatting": true/false (optional)}. '
        "See docs/benchmark.md. " + OPERATOR_ONLY
    )

    def add_arguments(self, parser):
        add_dataset_arguments(parser)
        parser.add_argument("path", type=Path)
        parser.add_argument("--system", help="System name, when the lines do not carry one.")
        parser.add_argument("--model", help="The vendor's model string, when the lines do not carry one.")
        parser.add_argument(
            "--formatting", type=on_off, help="Formatting layer on/off, when the lines do not say."
        )
        parser.add_argument(
            "--run-date", type=date.fromisoformat, help="When the hypotheses were made (YYYY-MM-DD)."
        )

    def handle(
        self, dataset, dataset_version, revision, path, system, model, formatting, run_date, **options
    ):
        data = get_dataset(dataset, dataset_version, revision)
        try:
            result = import_hypotheses(
                data, path, system=system, model=model, formatting=formatting, run_date=run_date
            )
        except HypothesesRefused as exc:
            raise CommandError("\n".join([str(exc), *(f"  {e}" for e in exc.errors)])) from None
        run = result.run
        if result.unchanged:
            self.stdout.write(
                f"Unchanged: {path.name} was already imported as run {run.pk}; nothing was changed."
            )
            return
        self.stdout.write(
            f"Imported run {run.pk}: {run.system_name} ({run.model or 'no model string'}) on {data.name} "
            f"{data.version}: {run.clips_done} hypotheses, {result.missing} clip(s) without a line."
        )
        if result.ignored_excluded:
            self.stdout.write(
                f"Ignored {len(result.ignored_excluded)} line(s) for clips excluded at import: "
                + ", ".join(result.ignored_excluded[:10])
            )
        self.stdout.write(f"Score it with: manage.py benchmark_score {run.pk}")
