"""Measure what a vocabulary does for a local Whisper engine on an organization's flagged lines and their control
lines: each line's clip through the engine plain and with the vocabulary as faster-whisper's hotwords, scored as the
product scores it. Runs the engine directly (no queue, nothing written), so it reads the same on any loaded demo:

    manage.py compare_vocabulary                      # the demo, Whisper base, each line's assistant's vocabulary
    manage.py compare_vocabulary --vocabulary "Names and menu" --transcriber whisper-tiny-en
"""

import time
from types import SimpleNamespace

from django.core.management.base import BaseCommand, CommandError

from oncore import audio
from oncore.accounts.models import Organization
from oncore.transcribers.engines import get_engine
from oncore.transcribers.models import Transcriber, Vocabulary
from transcriber_tests.lib import scoring
from transcriber_tests.models import ControlLine, Flag


def entry(base: Transcriber, terms: list[str]):
    """The catalogue entry as its engine reads it, with the terms as a vocabulary candidate sends them."""
    return SimpleNamespace(
        provider=base.provider,
        model=base.model,
        mode=Transcriber.BATCH,
        options=base.options,
        api_key_env=base.api_key_env,
        price_per_minute=base.price_per_minute,
        display_name=base.display_name,
        keyterms=terms,
    )


class Command(BaseCommand):
    help = (
        "Compare a local Whisper engine with and without a vocabulary (faster-whisper hotwords) on an "
        "organization's flagged lines (fixed: the text matches what was said) and their control lines (kept: it "
        "matches the live transcript), scored as the product scores them. Nothing is written."
    )

    def add_arguments(self, parser):
        parser.add_argument("--org", default="demo", help="The organization's slug (default: demo).")
        parser.add_argument(
            "--transcriber",
            default="whisper-base",
            help="A local catalogue entry's slug (default: whisper-base).",
        )
        parser.add_argument(
            "--vocabulary",
            default="",
            help="One vocabulary's name for every line (default: each line's assistant's vocabulary, else the "
            "organization-wide one).",
        )
        parser.add_argument("--lines", action="store_true", help="Print every line whose result differs.")

    def handle(self, org, transcriber, vocabulary, lines, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"No organization {org!r}: load the demo first (manage.py load_demo).")
        base = Transcriber.catalogue().filter(slug=transcriber).first()
        if base is None or base.provider != Transcriber.FASTER_WHISPER:
            raise CommandError(f"{transcriber!r} is not a faster-whisper entry of the catalogue.")
        vocabularies = list(Vocabulary.objects.filter(organization=organization))
        chosen = [v for v in vocabularies if v.name == vocabulary] if vocabulary else []
        if vocabulary and not chosen:
            raise CommandError(f"No vocabulary {vocabulary!r}; there are {[v.name for v in vocabularies]}.")

        def terms_for(call) -> tuple[str, list[str]]:
            if chosen:
                return chosen[0].name, chosen[0].terms
            own = [v for v in vocabularies if v.assistant_id == call.assistant_id]
            general = [v for v in vocabularies if v.assistant_id is None]
            found = (own or general or [None])[0]
            return (found.name, found.terms) if found else ("none", [])

        items = [
            ("flagged", f.line, f.expected_text)
            for f in Flag.objects.filter(organization=organization).select_related("line__call")
        ]
        items += [
            ("control", c.line, c.expected_text)
            for c in ControlLine.objects.filter(flag__organization=organization).select_related("line__call")
        ]
        if not items:
            raise CommandError(f"{organization} has no flagged lines to compare on.")
        plain_engine = get_engine(entry(base, []))
        results = {"flagged": [], "control": []}
        started = time.perf_counter()
        used = set()
        for kind, line, expected in sorted(items, key=lambda i: (i[0], i[1].pk)):
            clips = audio.cut_line(audio.stored(line.call.recording), line.start_s, line.end_s)
            name, terms = terms_for(line.call)
            used.add(name)
            plain = plain_engine.transcribe(clips.candidate_wav).text
            hinted = get_engine(entry(base, terms)).transcribe(clips.candidate_wav).text if terms else plain
            row = (
                line,
                expected,
                plain,
                hinted,
                scoring.score_line(expected, plain).match,
                scoring.score_line(expected, hinted).match,
            )
            results[kind].append(row)
            if lines and row[4] != row[5]:
                change = "fixed by the vocabulary" if row[5] else "broken by the vocabulary"
                self.stdout.write(
                    f"  {kind} line {line.position + 1} of {line.call.external_id}: {change}\n"
                    f"    expected: {expected}\n    plain:    {plain}\n    hotwords: {hinted}"
                )
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"{base.display_name} without and with a vocabulary as faster-whisper hotwords on {organization.name}'s "
            f"lines (vocabulary: {', '.join(sorted(used))}; {seconds:.0f} s):"
        )
        for kind, label in (("flagged", "flagged lines fixed"), ("control", "control lines kept")):
            rows = results[kind]
            plain_n, hinted_n = sum(r[4] for r in rows), sum(r[5] for r in rows)
            gained = sum(1 for r in rows if r[5] and not r[4])
            lost = sum(1 for r in rows if r[4] and not r[5])
            self.stdout.write(
                f"  {label}: {plain_n} of {len(rows)} plain, {hinted_n} of {len(rows)} with the vocabulary "
                f"({gained} gained, {lost} lost)"
            )
