from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmark.entity.importer import ImportRefused, import_dataset

from ._common import OPERATOR_ONLY


class Command(BaseCommand):
    help = (
        "Import the Entity Transcription Benchmark from PATH: a folder with data/test-*.parquet, or a "
        "parquet "
        "file. Rows that break the dataset's contract are excluded and listed with their clip id and reason. "
        "Importing the same files again changes nothing. " + OPERATOR_ONLY
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version names the dataset's version here, not Django's.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)
        parser.add_argument(
            "--name", help="Dataset name (default: from the dataset card, or the folder name)."
        )
        parser.add_argument(
            "--version",
            "--dataset-version",
            dest="dataset_version",
            help='Dataset version (default: "Current version" in the README next to the files, '
            'else "unknown").',
        )
        parser.add_argument(
            "--revision",
            help="Commit of the annotations (default: from the dataset card or the huggingface-cli download "
            'metadata, else "unknown"). Pin it: figures are not comparable across revisions.',
        )

    def handle(self, path, name, dataset_version, revision, **options):
        try:
            result = import_dataset(
                path,
                name=name,
                version=dataset_version,
                revision=revision,
                out=lambda message: self.stderr.write(message),
            )
        except ImportRefused as exc:
            raise CommandError(str(exc)) from None
        d = result.dataset
        what = f"{d.name} version {d.version} revision {d.revision}"
        if result.unchanged:
            self.stdout.write(
                f"Unchanged: {what} was already imported from these files (same sha256); "
                "nothing was changed. "
                f"{d.clip_count} clips, {d.span_count} spans, {d.excluded_count} row(s) excluded."
            )
            for clip_id, reason in result.problems:
                self.stdout.write(f"  excluded {clip_id}: {reason}")
            return
        self.stdout.write(
            f"Imported {what}: {result.clips} clips, {result.spans} spans; "
            f"{len(result.problems)} row(s) excluded for breaking the dataset's contract."
        )
        for source in d.source_files:
            self.stdout.write(f"  {source['name']}  sha256 {source['sha256']}  {source['rows']} rows")
