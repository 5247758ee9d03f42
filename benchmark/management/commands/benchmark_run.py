from django.core.management.base import BaseCommand, CommandError

from benchmark.entity import runs
from benchmark.executor import DEFAULT_CONCURRENCY, ProgressBar, RunRefused
from benchmark.models import BenchmarkRun
from oncore.transcribers.models import Transcriber

from ._common import OPERATOR_ONLY, add_dataset_arguments, get_dataset, on_off


class Command(BaseCommand):
    help = (
        "Transcribe every clip of a benchmark dataset with a catalogue transcriber. Resumable: run the same "
        "command again and an interrupted run continues where it stopped; a clip already transcribed "
        "is never "
        "sent again. " + OPERATOR_ONLY
    )

    def add_arguments(self, parser):
        add_dataset_arguments(parser)
        parser.add_argument("--transcriber", required=True, help="Catalogue slug, e.g. whisper-tiny-en.")
        parser.add_argument("--concurrency", type=int, default=None, help="Clips sent at once (default 2).")
        parser.add_argument("--new", action="store_true", help="Start a new run even if one can be resumed.")
        parser.add_argument("--run", type=int, help="Resume this run id.")
        parser.add_argument(
            "--max-clips", type=int, help="Send at most this many clips, then stop (resumable)."
        )
        parser.add_argument("--retry-failed", action="store_true", help="Queue the run's failed clips again.")
        parser.add_argument(
            "--formatting", type=on_off, help="Record whether the system's formatting is on/off."
        )

    def handle(
        self,
        dataset,
        dataset_version,
        revision,
        transcriber,
        concurrency,
        new,
        run,
        max_clips,
        retry_failed,
        formatting,
        **options,
    ):
        data = get_dataset(dataset, dataset_version, revision)
        try:
            entry = Transcriber.objects.get(slug=transcriber)
        except Transcriber.DoesNotExist:
            slugs = ", ".join(Transcriber.objects.order_by("slug").values_list("slug", flat=True))
            raise CommandError(f"No catalogue transcriber {transcriber!r}. Catalogue: {slugs}.") from None
        try:
            bench_run = self._pick_run(data, entry, run, new, formatting, concurrency)
        except RunRefused as exc:
            raise CommandError(str(exc)) from None
        if retry_failed:
            self.stdout.write(
                f"Queued {runs.retry_failed(bench_run)} failed clip(s) of run {bench_run.pk} again."
            )
        before = runs.refresh_counts(bench_run.pk)
        self.stdout.write(
            f"Run {bench_run.pk}: {entry.slug} on {data.name} {data.version}: {before.total} clips, "
            f"{before.done} done, {before.failed} failed, {before.left} to transcribe."
        )
        bar = ProgressBar(self.stderr, f"run {bench_run.pk}")
        try:
            outcome = runs.execute_run(
                bench_run.pk, concurrency=concurrency, max_clips=max_clips, progress=bar
            )
        except KeyboardInterrupt:
            bar.close()
            p = runs.refresh_counts(bench_run.pk)
            raise CommandError(
                f"Interrupted: run {bench_run.pk} has {p.done} done, {p.failed} failed, {p.left} left. "
                "Run the same command again to continue where it stopped."
            ) from None
        except RunRefused as exc:
            raise CommandError(str(exc)) from None
        bar.close()
        self.stdout.write(
            f"Run {bench_run.pk} {outcome.status}: {outcome.done} done, {outcome.failed} failed, "
            f"{outcome.left} left; {outcome.sent} clip(s) sent this time."
        )
        if outcome.failed:
            for clip_id, error in bench_run.hypotheses.filter(status="failed").values_list(
                "clip__clip_id", "error"
            )[:10]:
                self.stdout.write(f"  failed {clip_id}: {error}")
            self.stdout.write(
                f"Retry them with: manage.py benchmark_run --dataset {data.name} "
                f"--transcriber {entry.slug} --run {bench_run.pk} --retry-failed"
            )
        if outcome.status == BenchmarkRun.DONE:
            self.stdout.write(f"Score it with: manage.py benchmark_score {bench_run.pk}")

    def _pick_run(self, data, entry, run_id, new, formatting, concurrency):
        if run_id:
            try:
                found = BenchmarkRun.objects.get(pk=run_id, dataset=data)
            except BenchmarkRun.DoesNotExist:
                raise CommandError(f"No run {run_id} on {data.name} {data.version}.") from None
            if found.transcriber_id != entry.pk:
                raise CommandError(f"Run {run_id} is a run of {found.system_name}, not {entry.slug}.")
            return found
        if not new:
            found = runs.resumable_run(data, entry)
            if found is not None:
                self.stdout.write(f"Resuming run {found.pk} (pass --new to start another).")
                return found
        return runs.create_run(
            data, entry, formatting=formatting, concurrency=concurrency or DEFAULT_CONCURRENCY
        )
