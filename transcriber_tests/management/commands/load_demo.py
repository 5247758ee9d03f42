import json
import random
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from benchmark import selectors as benchmark
from oncore import audio
from oncore.accounts.models import Membership, Organization
from oncore.calls.importer import do_import_calls
from oncore.calls.models import Assistant, Line
from oncore.transcribers.engines import get_engine
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions, aggregates, errors
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.actions import vocabularies
from transcriber_tests.queries.lines import live_transcriber_of

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
DEMO_FILE = FIXTURES / "demo" / "calls.json"
FLAGS_FILE = FIXTURES / "demo" / "flags.json"
VOCABULARIES_FILE = FIXTURES / "demo" / "vocabularies.json"
LOGINS = [
    ("demo-admin", "demo-admin-pass", Membership.ADMIN),
    ("demo-member", "demo-member-pass", Membership.MEMBER),
]
# The bank compares real alternatives to the live transcriber (Whisper tiny.en, shown beside them for reference):
# as a candidate it would replay each line through the very path its live text came from and match every control,
# so a lead would come from the control lines alone.
CANDIDATES = ["whisper-base", "pocketsphinx-en-us"]
# Beside them, Whisper base with the organization-wide vocabulary as faster-whisper's hotwords (docs/vocabularies.md):
# the same model with and without the names and menu words, on the same lines.
VOCABULARY_CANDIDATE = ("whisper-base", "Names and menu")
# A second, small bank replays a few flags' lines as live calls (docs/streaming.md): each line's clip in 20 ms
# frames paced in real time, so its results show time to final. Its streaming candidate runs the live
# transcriber's own model, which the page marks (on control lines it repeats the live text); it costs the queue
# each line's duration, so the bank holds the flags of a few calls only (STREAMING_CALLS). Whisper tiny.en in batch
# beside it is the same model in the other mode: the trust section gives what streaming costs it in accuracy.
STREAMING_BANK = "Streaming"
STREAMING_CANDIDATES = ["whisper-tiny-en-streaming", "whisper-tiny-en", "whisper-base"]
STREAMING_CALLS = {"helpdesk-001", "helpdesk-002", "helpdesk-004"}
LOCAL_ENGINES = ["whisper-base", "whisper-tiny-en", "pocketsphinx-en-us"]
RUN_CANDIDATE = "whisper-base"  # the strongest local engine: the one a demo admin would try on whole calls
RUN_CALLS = (
    6  # the newest flagged calls it runs over: enough for its figures, and the demo complete in minutes
)
# Code-switching runs: (transcriber, language hint). tiny.en is English only, which the report shows.
CODESWITCH_RUNS = [("whisper-base", False), ("whisper-base", True), ("whisper-tiny-en", False)]


def heard(line) -> str:
    """What the call's live transcriber hears on a line here: the clip a replay sends, through its engine."""
    clips = audio.cut_line(
        audio.stored(line.call.recording), line.start_s, line.end_s, label=f"call {line.call.external_id}"
    )
    return get_engine(live_transcriber_of(line.call)).transcribe(clips.candidate_wav).text


def hear_again(lines) -> int:
    """Make the live transcripts of the demo's caller lines (timed, recorded) what this machine's live transcriber
    hears; how many changed. The fixtures' live texts were made by Whisper tiny.en on the machine that built them,
    and its int8 arithmetic differs from one CPU to another (vendor, AVX-512 or not): another machine hears some
    lines otherwise, and a full-call run's calibration would then measure the CPU, not the audio path. No sample
    of lines can tell whether a machine hears them all alike (one Intel machine heard five probe lines as the
    fixtures' maker did and others not), so every line is heard: about a minute on two cores."""
    changed = []
    for line in lines:
        text = heard(line)
        if text != line.text:
            line.text = text
            changed.append(line)
    Line.objects.bulk_update(changed, ["text"])
    return len(changed)


class Command(BaseCommand):
    help = (
        "Load the demo: an organization with its logins, a bank with two local candidates and a small one with a "
        "streaming candidate, the "
        "synthesized calls and the flags of fixtures/demo/, a full-call run, and the packaged entity-benchmark and "
        "code-switching fixtures with runs of the local engines. Everything a transcriber produces is queued: "
        "a queue worker (manage.py qcluster, which make run starts) computes it in the background."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--flags",
            type=int,
            default=None,
            help="Load at most this many of the demo's flags (default: all).",
        )
        parser.add_argument(
            "--no-runs",
            action="store_true",
            help="Start no full-call run and leave the benchmark fixtures out: calls, bank and flags only.",
        )

    def handle(self, flags, no_runs, **options):
        if Organization.objects.filter(slug="demo").exists():
            self.stdout.write("The demo organization is already loaded.")
            return
        with transaction.atomic():
            org = Organization.objects.create(name="Demo Hospitality Group", slug="demo")
            User = get_user_model()
            admin = None
            for username, password, role in LOGINS:
                user, _ = User.objects.get_or_create(username=username)
                user.set_password(password)
                user.save()
                Membership.objects.create(user=user, organization=org, role=role)
                admin = admin or user
            counts = do_import_calls(DEMO_FILE, org, shift_to=timezone.now())
            if not no_runs:  # the full-call run replays the live transcriber: it must hear what the lines say
                self._hear_again(org)
            bank = actions.do_create_bank(org, name="English", language_label="English")
            for slug in CANDIDATES:
                actions.do_add_candidate(bank, Transcriber.objects.get(slug=slug), confirmed=True)
            made_vocabularies = self._vocabularies(org, admin)
            slug, name = VOCABULARY_CANDIDATE
            vocabularies.do_add_vocabulary_candidate(
                bank, Transcriber.objects.get(slug=slug), made_vocabularies[name], confirmed=True
            )
            streaming = actions.do_create_bank(org, name=STREAMING_BANK, language_label="English")
            for slug in STREAMING_CANDIDATES:
                actions.do_add_candidate(streaming, Transcriber.objects.get(slug=slug), confirmed=True)
            made = self._flag(org, bank, streaming, admin, flags)
            run = None if no_runs else self._full_call_run(bank, admin)
        self.stdout.write(
            f"Loaded the demo: {counts['calls']} calls, {counts['lines']} lines, "
            f"{len(made_vocabularies)} vocabularies, bank {bank.name!r} with "
            f"{len(CANDIDATES) + 1} candidates (one with a vocabulary) and bank {streaming.name!r} with {len(STREAMING_CANDIDATES)} (one "
            f"streaming), {made} flags queued"
            + (f", full-call run {run.pk} of {run.candidate} queued" if run else "")
            + ". Logins: "
            + ", ".join(f"{u} / {p}" for u, p, _ in LOGINS)
        )
        if not no_runs:
            self._benchmarks()

    def _vocabularies(self, org, user) -> dict:
        """The demo's vocabularies (fixtures/demo/vocabularies.json), each its assistant's or every assistant's."""
        made = {}
        for spec in json.loads(VOCABULARIES_FILE.read_text())["vocabularies"]:
            assistant = None
            if spec["assistant"]:
                assistant = Assistant.objects.get(
                    tenant__organization=org, tenant__slug=spec["tenant"], name=spec["assistant"]
                )
            made[spec["name"]] = vocabularies.do_create_vocabulary(
                org, name=spec["name"], terms=spec["terms"], assistant=assistant, user=user
            )
        return made

    def _hear_again(self, org) -> None:
        lines = list(
            Line.objects.filter(call__tenant__organization=org, speaker=Line.CALLER, start_s__isnull=False)
            .exclude(call__recording="")
            .select_related("call__live_transcriber")
            .order_by("call__started_at", "position")
        )
        changed = hear_again(lines)
        self.stdout.write(
            f"Heard the demo's {len(lines)} caller lines with its live transcriber on this machine: {changed} "
            "differ from the fixtures (Whisper's arithmetic differs by CPU), and their live transcripts are now "
            "what it hears here."
        )

    def _flag(self, org, bank, streaming, user, limit) -> int:
        """The demo's flags (fixtures/demo/flags.json): what was said, the tags and note a person typed, made
        the given hours after the call, into `bank`, those of STREAMING_CALLS into `streaming`. Each draws its
        control lines with a seed of its own, so every load draws the same ones."""
        specs = json.loads(FLAGS_FILE.read_text())["flags"][:limit]
        lines = {
            (line.call.external_id, line.position): line
            for line in Line.objects.filter(call__tenant__organization=org).select_related("call")
        }
        now = timezone.now()
        made = 0
        for spec in specs:
            line = lines[(spec["call"], spec["position"])]
            try:
                flag = actions.do_flag_line(
                    line,
                    spec["expected_text"],
                    bank=streaming if spec["call"] in STREAMING_CALLS else bank,
                    tags=spec["tags"],
                    note=spec["note"],
                    user=user,
                    rng=random.Random(f"{spec['call']}:{spec['position']}"),
                )
            except errors.ExpectedMatchesLive:  # heard right on this machine (see hear_again): not wrong here
                self.stdout.write(
                    f"Not flagged: line {line.position + 1} of {spec['call']} is heard right here."
                )
                continue
            made_at = min(line.call.started_at + timedelta(hours=spec["flagged_after_h"]), now)
            type(flag).objects.filter(pk=flag.pk).update(created_at=made_at, joined_at=made_at)
            made += 1
        aggregates.rebuild(
            [bank.pk, streaming.pk]
        )  # the per-day totals count each flag on the day it was made
        return made

    def _full_call_run(self, bank, user):
        """A full-call run of the strongest local engine over the newest calls flagged into the bank."""
        calls = (
            bank.flags.order_by("-line__call__started_at").values_list("line__call_id", flat=True).distinct()
        )
        call_ids = list(dict.fromkeys(calls))[:RUN_CALLS]
        if not call_ids:
            return None
        candidate = Transcriber.objects.get(slug=RUN_CANDIDATE)
        return run_actions.do_start_run(bank, call_ids, candidate=candidate, confirmed=True, user=user)

    def _benchmarks(self) -> None:
        """The packaged entity-benchmark and code-switching fixtures, and runs of the local engines on them."""
        self.stdout.write(benchmark.load_packaged_fixtures(LOCAL_ENGINES, CODESWITCH_RUNS))
