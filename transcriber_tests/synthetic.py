"""Synthetic banks full of scored flags, for query-count tests and performance scripts (bench/). Rows are written
with bulk_create straight into their final state; nothing here is used by the product itself."""

import random
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from oncore.calls.models import Assistant, Call, Line
from oncore.transcribers.models import Transcriber

from .actions import score_values
from .models import Bank, Candidate, ControlLine, Flag, Score, Transcription

WORDS = (
    "table for four at eight thirty siobhan niamh saoirse booking tuesday account number ticket "
    "please confirm the address one two three main street dental cleaning appointment"
).split()


def _sentence(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))


def _garble(rng, text):
    words = text.split()
    if rng.random() < 0.6:
        return text
    i = rng.randrange(len(words))
    words[i] = rng.choice(WORDS)
    return " ".join(words)


def fill_bank(organization, *, flags: int, candidates: int = 8, name="Synthetic", seed=1, lines_per_call=20):
    """A bank with `candidates` transcribers and `flags` flags, each with one control; every item scored live
    and by every candidate. Returns the bank."""
    rng = random.Random(seed)
    tenant = organization.tenants.first() or organization.tenants.create(name="Synthetic", slug="synthetic")
    live = Transcriber.objects.create(
        slug=f"{name.lower()}-live-{seed}",
        provider=Transcriber.GENERIC,
        model="live",
        display_name=f"{name} live",
    )
    transcribers = [
        Transcriber.objects.create(
            slug=f"{name.lower()}-{seed}-{i}",
            provider=Transcriber.GENERIC,
            model=f"m{i}",
            display_name=f"{name} candidate {i}",
            price_per_minute="0.0043",
        )
        for i in range(candidates)
    ]
    bank = Bank.objects.create(organization=organization, name=f"{name} {seed}")
    Candidate.objects.bulk_create(
        [Candidate(bank=bank, transcriber=t, position=i) for i, t in enumerate(transcribers)]
    )
    assistant = Assistant.objects.create(tenant=tenant, name=f"{name} assistant")
    now = timezone.now()
    n_calls = (2 * flags + lines_per_call - 1) // lines_per_call
    calls = Call.objects.bulk_create(
        [
            Call(
                tenant=tenant,
                assistant=assistant,
                started_at=now - timedelta(minutes=i),
                recorded=True,
                recording=f"recordings/synthetic-{seed}.flac",
                live_transcriber=live,
            )
            for i in range(n_calls)
        ]
    )
    lines = Line.objects.bulk_create(
        [
            Line(
                call=call,
                position=p,
                speaker="caller",
                text=_sentence(rng),
                start_s=p * 3.0,
                end_s=p * 3.0 + 2.5,
            )
            for call in calls
            for p in range(lines_per_call)
        ][: 2 * flags]
    )
    truth = {line.pk: _garble(rng, line.text) for line in lines}
    flag_rows = Flag.objects.bulk_create(
        [
            Flag(
                organization=organization,
                line=lines[2 * i],
                bank=bank,
                expected_text=truth[lines[2 * i].pk],
                tags=",name," if i % 3 == 0 else ",time,",
            )
            for i in range(flags)
        ]
    )
    Flag.objects.filter(pk__in=[f.pk for f in flag_rows]).update(created_at=now - timedelta(hours=1))
    controls = ControlLine.objects.bulk_create(
        [
            ControlLine(flag=f, line=lines[2 * i + 1], expected_text=lines[2 * i + 1].text)
            for i, f in enumerate(flag_rows)
        ]
    )
    scores, transcriptions = [], []
    items = [(f, None, f.expected_text, f.line) for f in flag_rows]
    items += [(c.flag, c, c.expected_text, c.line) for c in controls]
    for flag, control, expected, line in items:
        for source, transcriber in [("live", live)] + [("candidate", t) for t in transcribers]:
            hypothesis = line.text if source == "live" else _garble(rng, expected)
            scores.append(
                Score(
                    flag=flag,
                    control=control,
                    transcriber=transcriber,
                    source=source,
                    **score_values(expected, hypothesis),
                )
            )
            if source == "candidate":
                transcriptions.append(
                    Transcription(
                        organization=organization,
                        line=line,
                        transcriber=transcriber,
                        status=Transcription.DONE,
                        text=hypothesis,
                        audio_seconds=3.1,
                        cost="0.000222",
                    )
                )
    Score.objects.bulk_create(scores, batch_size=5000)
    Transcription.objects.bulk_create(transcriptions, batch_size=5000)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # after a bulk load, give the planner real statistics
            cursor.execute("ANALYZE")
    return bank
