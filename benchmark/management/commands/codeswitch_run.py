"""Run a catalogue transcriber over a code-switched dataset, score it, and judge it: see docs/codeswitch.md."""

from django.core.management.base import BaseCommand, CommandError

from benchmark.codeswitch import judge, runs
from benchmark.executor import ProgressBar, RunRefused
from benchmark.models import CsDataset, CsRun
from oncore.transcribers.models import Transcriber

from ._common import OPERATOR_ONLY


class Command(BaseCommand):
    help = (
        "Transcribe a code-switched dataset with a catalogue transcriber (resumable), then judge it. "
        + OPERATOR_ONLY
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True, help="Dataset name (see import_codeswitch).")
        parser.add_argument("--transcriber", help="Catalogue slug, e.g. whisper-base.")
        parser.add_argument(
            "--language-hint",
            action="store_true",
            help="Send each clip's language (matrix language, or English); default: the engine detects it.",
        )
        parser.add_argument("--concurrency", type=int, default=None)
        parser.add_argument("--max-utterances", type=int, default=None, help="Send at most this many clips.")
        parser.add_argument("--new", action="store_true", help="Start a new run instead of resuming.")
        parser.add_argument("--run", type=int, help="Continue (or judge) this run.")
        parser.add_argument("--retry-failed", action="store_true", help="Queue the failed clips again.")
        parser.add_argument(
            "--no-judge", action="store_true", help="Skip semantic WER and answer error rate."
        )
        parser.add_argument("--judge-only", action="store_true", help="Only judge the run's done clips.")

    def handle(self, *args, **o):
        try:
            dataset = CsDataset.objects.get(name=o["dataset"])
        except CsDataset.DoesNotExist:
            raise CommandError(f"No code-switched dataset named {o['dataset']!r}: import it first.") from None
        run = self._run(dataset, o)
        try:
            if not o["judge_only"]:
                if o["retry_failed"]:
                    self.stdout.write(f"Queued {runs.retry_failed(run)} failed clip(s) again.")
                bar = ProgressBar(self.stderr, f"run {run.pk}")
                outcome = runs.execute_run(
                    run.pk, concurrency=o["concurrency"], max_utterances=o["max_utterances"], progress=bar
                )
                bar.close()
                self.stdout.write(
                    f"Run {run.pk} ({run.label}) {outcome.status}: {outcome.done} done, {outcome.failed} failed, "
                    f"{outcome.left} left; {outcome.sent} clip(s) sent this time."
                )
                for uid, cond, error in run.results.filter(status="failed").values_list(
                    "utterance__utterance_id", "utterance__condition", "error"
                ):
                    self.stderr.write(f"Failed {uid} ({cond}): {error}")
        except RunRefused as exc:
            raise CommandError(str(exc)) from None
        if o["no_judge"]:
            return
        bar = ProgressBar(self.stderr, f"judging run {run.pk}", "judgements")
        try:
            judged = judge.judge_run(run.pk, progress=bar.show)
        except judge.JudgeNotConfigured:
            self.stdout.write(
                "Judge not configured (set ANTHROPIC_API_KEY): semantic WER and answer error rate were skipped."
            )
            return
        bar.close()
        self.stdout.write(
            f"Judged run {run.pk}: {judged.judged} judgement(s), {judged.failed} failed, "
            f"{judged.questions_written} clip(s) got questions; ${judged.cost:.4f}."
        )

    def _run(self, dataset, o) -> CsRun:
        if o["run"]:
            try:
                return CsRun.objects.get(pk=o["run"], dataset=dataset)
            except CsRun.DoesNotExist:
                raise CommandError(f"Run {o['run']} is not a run on {dataset.name}.") from None
        if not o["transcriber"]:
            raise CommandError("Give --transcriber SLUG (or --run ID).")
        try:
            transcriber = Transcriber.objects.get(slug=o["transcriber"])
        except Transcriber.DoesNotExist:
            raise CommandError(f"No transcriber {o['transcriber']!r} in the catalogue.") from None
        hint = o["language_hint"]
        run = None if o["new"] else runs.resumable_run(dataset, transcriber, language_hint=hint)
        if run is None and o["judge_only"]:
            run = CsRun.objects.filter(dataset=dataset, transcriber=transcriber, language_hint=hint).first()
            if run is None:
                raise CommandError("No run to judge.")
        if run is None:
            try:
                run = runs.create_run(
                    dataset, transcriber, language_hint=hint, concurrency=o["concurrency"] or 2
                )
            except RunRefused as exc:
                raise CommandError(str(exc)) from None
        return run
