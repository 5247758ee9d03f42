"""Import a code-switched dataset from JSONL: see docs/codeswitch.md."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.codeswitch.importer import ImportRefused, import_codeswitch

from ._common import OPERATOR_ONLY


class Command(BaseCommand):
    help = (
        "Import a code-switched dataset (JSONL, audio paths relative to the file). Idempotent. "
        + OPERATOR_ONLY
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="The JSONL file.")
        parser.add_argument("--name", help="Dataset name (default: the file name without .jsonl).")
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace a dataset of that name imported from a different file (its runs are deleted).",
        )

    def handle(self, *args, path, name=None, replace=False, **options):
        try:
            result = import_codeswitch(Path(path), name=name, replace=replace)
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        dataset = result.dataset
        if result.unchanged:
            self.stdout.write(f"Unchanged: {dataset.name} was imported from this file; nothing was changed.")
            return
        for line, uid, reason in result.problems:
            self.stderr.write(f"Excluded line {line} ({uid or 'no id'}): {reason}")
        self.stdout.write(
            f"Imported {dataset.name}: {result.utterances} clips, {result.detected_tags} with word languages "
            f"detected by lingua, {len(result.problems)} line(s) excluded."
        )
