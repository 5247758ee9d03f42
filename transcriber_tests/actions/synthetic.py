"""Synthetic banks full of scored flags, for query-count tests and performance scripts (bench/). Rows are written
straight into their final state (COPY on PostgreSQL, bulk_create elsewhere); nothing here is used by the product
itself."""

import math
import random
from datetime import timedelta

from django.db import connection
from django.utils import timezone
from django.utils.text import slugify

from oncore.calls.models import Assistant, Call, Line
from oncore.transcribers.models import Transcriber

from .. import aggregates
from ..models import Bank, Candidate, ControlLine, Flag, Score, Transcription
from .scores import csv_cells, score_values

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


CHUNK = 2000  # flags (with their control, lines, scores and transcriptions) generated and written at a time


def insert_rows(model, objs) -> list[int]:
    """Insert unsaved instances of a model, as they are (auto_now fields set now): COPY on PostgreSQL, with ids
    drawn from the table's sequence first; bulk_create elsewhere. Sets and returns their ids, in order."""
    objs = list(objs)
    if not objs:
        return []
    if connection.vendor != "postgresql":
        model.objects.bulk_create(objs, batch_size=CHUNK)
        return [obj.pk for obj in objs]
    table = model._meta.db_table
    fields = model._meta.concrete_fields
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, len(objs)]
        )
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            obj.pk = pk
        q = connection.ops.quote_name
        columns = ", ".join(q(f.column) for f in fields)
        with cursor.cursor.copy(f"COPY {q(table)} ({columns}) FROM STDIN") as copy:
            for obj in objs:
                copy.write_row([f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields])
    return [obj.pk for obj in objs]


LINE_S = 2.5  # every synthetic caller line's length


def _latency(rng, i: int) -> float:
    """A candidate's latency on a line: log-normal around a median that grows with its place (0.3 s, 0.45 s...),
    drawn from a generator of its own, so the texts stay those of the same seed."""
    return round(rng.lognormvariate(math.log(0.3 + 0.15 * i), 0.35), 6)


def fill_bank(
    organization,
    *,
    flags: int,
    candidates: int = 8,
    name="Synthetic",
    seed=1,
    lines_per_call=20,
    tenants: int = 1,
):
    """A bank with `candidates` transcribers and `flags` flags, each with one control; every item scored live
    and by every candidate, with a latency. The calls are spread over `tenants` tenants (the organization's
    first one, then new ones), two assistants each. Written CHUNK flags at a time (COPY on PostgreSQL), then
    the bank's totals are computed from the rows (aggregates.rebuild). Returns the bank."""
    rng = random.Random(seed)
    timing = random.Random(seed + 1000)
    tenant = organization.tenants.first() or organization.tenants.create(name="Synthetic", slug="synthetic")
    more = [
        organization.tenants.create(
            name=f"{name} tenant {k + 1}", slug=f"{slugify(name)}-{seed}-tenant-{k + 1}"
        )
        for k in range(1, tenants)
    ]
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
    assistants = [Assistant.objects.create(tenant=tenant, name=f"{name} assistant")]
    if tenants > 1:
        assistants = [
            Assistant.objects.create(tenant=t, name=f"{t.name} desk {j + 1}")
            for t in [tenant, *more]
            for j in range(2)
        ]
    now = timezone.now()
    n_calls = (2 * flags + lines_per_call - 1) // lines_per_call
    calls = [
        Call(
            tenant_id=assistants[i % len(assistants)].tenant_id,
            assistant=assistants[i % len(assistants)],
            started_at=now - timedelta(minutes=i),
            recorded=True,
            recording=f"recordings/synthetic-{seed}.flac",
            live_transcriber=live,
        )
        for i in range(n_calls)
    ]
    insert_rows(Call, calls)
    for first in range(0, flags, CHUNK):
        _fill_chunk(
            organization,
            bank,
            calls,
            live,
            transcribers,
            (rng, timing),
            range(first, min(flags, first + CHUNK)),
            lines_per_call,
        )
    Flag.objects.filter(bank=bank).update(
        created_at=now - timedelta(hours=1), joined_at=now - timedelta(hours=1)
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # after a bulk load, give the planner real statistics
            cursor.execute("ANALYZE")
    # The rows went in around the actions: the bank's totals and the calls' counters.
    aggregates.rebuild([bank.pk])
    return bank


def _fill_chunk(organization, bank, calls, live, transcribers, rngs, flag_numbers, lines_per_call):
    """Flags `flag_numbers` of fill_bank: flag i is on line 2i, its control on line 2i + 1 (of the same call)."""
    rng, timing = rngs
    lines = [
        Line(
            call=calls[k // lines_per_call],
            position=k % lines_per_call,
            speaker="caller",
            text=_sentence(rng),
            start_s=(k % lines_per_call) * 3.0,
            end_s=(k % lines_per_call) * 3.0 + LINE_S,
        )
        for i in flag_numbers
        for k in (2 * i, 2 * i + 1)
    ]
    insert_rows(Line, lines)
    pairs = list(zip(lines[::2], lines[1::2], flag_numbers, strict=True))
    flags = [
        Flag(
            organization=organization,
            line=line,
            bank=bank,
            expected_text=_garble(rng, line.text),
            tags=",name," if i % 3 == 0 else ",time,",
        )
        for line, _, i in pairs
    ]
    insert_rows(Flag, flags)
    controls = [
        ControlLine(flag=flag, line=control_line, expected_text=control_line.text)
        for flag, (_, control_line, _) in zip(flags, pairs, strict=True)
    ]
    insert_rows(ControlLine, controls)
    scores, transcriptions = [], []
    items = [(f, None, f.expected_text, f.line) for f in flags]
    items += [(c.flag, c, c.expected_text, c.line) for c in controls]
    for flag, control, expected, line in items:
        for i, (source, transcriber) in enumerate(
            [("live", live)] + [("candidate", t) for t in transcribers]
        ):
            hypothesis = line.text if source == "live" else _garble(rng, expected)
            latency_s = _latency(timing, i - 1) if source == "candidate" else None
            values = {**score_values(expected, hypothesis), "latency_s": latency_s}
            values["csv_cells"] = csv_cells(transcriber.pk, source, values)
            scores.append(
                Score(
                    flag=flag,
                    control=control,
                    transcriber=transcriber,
                    source=source,
                    cost="0.000222" if source == "candidate" else None,
                    audio_s=LINE_S if source == "candidate" else None,
                    **values,
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
                        audio_seconds=LINE_S,
                        cost="0.000222",
                        latency_s=latency_s,
                    )
                )
    insert_rows(Score, scores)
    insert_rows(Transcription, transcriptions)


def fill_calls(
    organization, *, calls: int, lines_per_call: int = 10, tenants: int = 4, days: int = 365, seed=1
):
    """`calls` calls of `lines_per_call` lines over `tenants` tenants (two assistants each) and the last `days`
    days, one call in a hundred with a flagged line (in no bank); counters set as the import and flagging keep
    them. Written CHUNK calls at a time (COPY on PostgreSQL). Returns the tenants."""
    rng = random.Random(seed)
    live = Transcriber.objects.create(
        slug=f"calls-live-{seed}", provider=Transcriber.GENERIC, model="live", display_name="Calls live"
    )
    made = [organization.tenants.create(name=f"Tenant {i}", slug=f"calls-{seed}-{i}") for i in range(tenants)]
    assistants = [
        Assistant.objects.create(tenant=t, name=f"{t.name} desk {j}") for t in made for j in range(2)
    ]
    now = timezone.now()
    for first in range(0, calls, CHUNK):
        batch = []
        for i in range(first, min(calls, first + CHUNK)):
            assistant = rng.choice(assistants)
            batch.append(
                Call(
                    tenant_id=assistant.tenant_id,
                    assistant=assistant,
                    external_id=f"c-{seed}-{i}",
                    started_at=now - timedelta(seconds=rng.randrange(days * 86400)),
                    live_transcriber=live,
                    n_lines=lines_per_call,
                    n_flags=1 if i % 100 == 0 else 0,
                )
            )
        insert_rows(Call, batch)
        lines = [
            Line(call=call, position=p, speaker="caller" if p % 2 == 0 else "assistant", text=_sentence(rng))
            for call in batch
            for p in range(lines_per_call)
        ]
        insert_rows(Line, lines)
        insert_rows(
            Flag,
            [
                Flag(
                    organization=organization, line=lines[k * lines_per_call], expected_text="a flagged line"
                )
                for k, call in enumerate(batch)
                if call.n_flags
            ],
        )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    return made
