"""The scores of transcriber testing, written here: one transcriber's text on one item (a flagged line or one of its
control lines) scored against the expected text (write_score), the live transcript scored as stored when an item
enters a bank, every item on a line scored when its transcription is final, and the lines queued for a bank's
candidates. The per-day totals follow in the transaction of each write (aggregates, which also keeps the item's
"candidates disagree" mark on its live score); a write marks its bank's results changed (`results_changed`: the
Bank's version moves and its snapshots are wanted again, so the figures are computed anew). After candidate scores
are written, the judge's picks and the flag.scored event are asked for (`ask_picks`, `scores_written`). The only
other writer of scores is the benches' synthetic banks (synthetic.py, for measuring only)."""

import threading
from contextlib import contextmanager

from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from benchmark import selectors as benchmark
from oncore import llm
from oncore.webhooks import actions as webhooks

from .. import aggregates, handles
from ..lib import alignment, cells, entities, scoring
from ..models import Bank, ControlLine, Flag, Score, Transcription
from ..queries import snapshots
from ..queries.lines import live_transcriber_of
from ..shapes import events, turns


def _items_on_line(line_id):
    """Flags and control lines whose audio is this line: (flag, control or None, expected text). An unsettled
    flag is not an item yet: settling it scores it (enter_items)."""
    items = [(f, None, f.expected_text) for f in Flag.objects.filter(line_id=line_id, settled=True)]
    items += [
        (c.flag, c, c.expected_text)
        for c in ControlLine.objects.filter(line_id=line_id).select_related("flag")
    ]
    return items


def score_values(expected: str, hypothesis: str | None) -> dict:
    """The Score fields of one transcriber's text on one item: scored against the expected text, or failed
    ("error" when no text came back, hypothesis None; "no text" when it has no words after normalization)."""
    failure = scoring.failure_of(hypothesis)
    values = {"normalizer_version": scoring.NORMALIZER_VERSION, "failure": failure, "failed": bool(failure)}
    if failure:
        values.update(
            hypothesis=hypothesis or "",
            match=False,
            wer=None,
            wer_units=None,
            case_or_punctuation_only=False,
            substitutions=0,
            deletions=0,
            insertions=0,
            reference_words=0,
            confusions="",
            text_key=None,
            alignment="",
            entities="",
        )
        return values
    s = scoring.score_line(expected, hypothesis)
    values.update(
        hypothesis=hypothesis,
        match=s.match,
        wer=s.wer,
        wer_units=s.wer_units,
        case_or_punctuation_only=s.case_or_punctuation_only,
        substitutions=s.substitutions,
        deletions=s.deletions,
        insertions=s.insertions,
        reference_words=s.reference_words,
        confusions="" if s.match else alignment.encode_confusions(alignment.confusions(expected, hypothesis)),
        text_key=alignment.text_key(hypothesis),
        alignment=alignment.encode_steps(alignment.align(expected, hypothesis)),
        entities=entity_marks(expected, hypothesis),
    )
    return values


def entity_marks(expected: str, hypothesis: str) -> str:
    """The expected text's entities, each marked kept or lost in the hypothesis, as Score.entities keeps them."""
    return entities.encode((m.text, m.category, m.kept) for m in benchmark.entity_marks(expected, hypothesis))


def write_score(
    flag,
    control,
    transcriber_id,
    source,
    hypothesis: str | None,
    expected: str,
    cost=None,
    latency_s=None,
    audio_s=None,
) -> None:
    """Score one item for one transcriber; `hypothesis=None` means it produced no text (failed). `cost`,
    `latency_s` and `audio_s` are the audio cost, latency and audio seconds of the transcription scored. The
    bank's totals (aggregates) follow in the same transaction."""
    values = {**score_values(expected, hypothesis), "cost": cost, "latency_s": latency_s, "audio_s": audio_s}
    values["csv_cells"] = csv_cells(transcriber_id, source, values)
    with (
        transaction.atomic(savepoint=False),
        aggregates.item_change(flag.pk, control.pk if control else None),
    ):
        # The item's flag is locked (item_change): no other write makes this score meanwhile.
        item = {"flag": flag, "control": control, "transcriber_id": transcriber_id, "source": source}
        if not Score.objects.filter(**item).update(**values, scored_at=timezone.now()):
            Score.objects.create(**item, **values)
    results_changed(flag.bank_id)


def csv_cells(transcriber_id: int, source: str, values: dict) -> str:
    """The score's turn-table CSV cells (shapes.turns.score_csv) from its field values."""
    return turns.score_csv(source, cells.cell(transcriber_id, *(values.get(c) for c in cells.COLUMNS)))


_changing = threading.local()  # the banks a `changes` block has changed so far


@contextmanager
def changes():
    """Around a write of several items in one transaction (a flag made with its controls, a line's scores): the
    totals' differences gather (aggregates.batch) and the banks whose results changed are noted, and at the end
    the banks' rows are locked (in id order), the totals added and the versions moved, in a few statements: a
    write locks its banks' rows only for the end of its transaction, so writes to other calls of a bank go on
    meanwhile. Nested, the outer block does it once."""
    if getattr(_changing, "banks", None) is not None:
        yield
        return
    _changing.banks = set()
    try:
        with aggregates.batch() as delta:
            yield
            delta.save(also_lock=_changing.banks)
            changed = _changing.banks
    finally:
        _changing.banks = None
    results_changed(*changed)


def settings_changed(*bank_ids) -> None:
    """Mark banks' own settings as changed (a name, threshold or number of controls; their candidates, the
    candidates' order or names): their settings version moves (the call page's kept flag boxes are read again),
    and their results with it (results_changed)."""
    Bank.objects.filter(pk__in=[pk for pk in bank_ids if pk is not None]).update(
        settings_version=F("settings_version") + 1
    )
    results_changed(*bank_ids)


def results_changed(*bank_ids) -> None:
    """Mark banks' results as changed: their version moves, and their figures' snapshots are wanted again, to be
    rebuilt by the queue once this transaction commits (queries/snapshots.py). Within `changes`, at its end."""
    ids = [pk for pk in bank_ids if pk is not None]
    if ids and getattr(_changing, "banks", None) is not None:
        _changing.banks.update(ids)
        return
    if ids:
        now = timezone.now()
        Bank.objects.filter(pk__in=ids).update(
            results_changed_at=now, snapshots_wanted_at=Coalesce("snapshots_wanted_at", Value(now))
        )
        snapshots.dispatch_later(ids)


def score_transcription(transcription: Transcription) -> int:
    """Write the candidate score of every item on the transcription's line. Returns how many."""
    done = transcription.status == Transcription.DONE
    text, cost = (transcription.text, transcription.cost) if done else (None, None)
    # The time to its final text, and the audio it was given: known once it came back (done).
    timing = (transcription.latency_s, transcription.audio_seconds) if done else (None, None)
    # The line's call is locked, then every flag involved in id order (the order of aggregates.lock_call), and the
    # items are written bank by bank, so two lines scored at once never wait on each other in a circle. The items
    # are read once the call is locked: a flag made on one of them meanwhile has retired a control or drawn one.
    aggregates.lock_call(line=transcription.line_id)
    items = _items_on_line(transcription.line_id)
    list(
        Flag.objects.select_for_update()
        .filter(pk__in={f.pk for f, _, _ in items})
        .order_by("pk")
        .values_list("pk")
    )
    items.sort(key=lambda item: (item[0].bank_id or 0, item[0].pk, item[1].pk if item[1] else 0))
    with changes():
        for flag, control, expected in items:
            write_score(
                flag, control, transcription.transcriber_id, Score.CANDIDATE, text, expected, cost, *timing
            )
    return len(items)


def enter_items(flag: Flag, controls, candidate_ids, *, own_line: bool = False) -> None:
    """Items join a bank with a flag (its own line as it enters, control lines drawn for it), written while the
    flag is out of its bank's totals and then counted with it once (aggregates.flag_entered), not once per score:
    the live transcript scored as stored, never transcribed again; each candidate's transcription of an item's
    line that has finished already scored at once (reused, never paid for again); the others queued."""
    items = [(None, flag.line, flag.expected_text)] if own_line else []
    items += [(c, c.line, c.expected_text) for c in controls]
    live = live_transcriber_of(flag.line.call)
    if own_line:  # a moved flag had its own line's live score; controls are drawn new
        Score.objects.filter(flag=flag, control__isnull=True, source=Score.LIVE).delete()
    _write_live(flag, [(control, line.text, expected) for control, line, expected in items], live.pk)
    finished = _transcriptions(flag.organization_id, [line for _, line, _ in items], candidate_ids)
    reused = [
        (control, line, expected, t) for control, line, expected in items for t in finished.get(line.pk, ())
    ]
    if own_line and finished.get(flag.line_id):  # a moved flag keeps its own line's scores: scored again
        Score.objects.filter(
            flag=flag,
            control__isnull=True,
            source=Score.CANDIDATE,
            transcriber_id__in=[t.transcriber_id for t in finished[flag.line_id]],
        ).delete()
    rows = []
    for control, _, expected, t in reused:
        done = t.status == Transcription.DONE
        values = {
            **score_values(expected, t.text if done else None),
            "cost": t.cost if done else None,
            "latency_s": t.latency_s if done else None,
            "audio_s": t.audio_seconds if done else None,
        }
        values["csv_cells"] = csv_cells(t.transcriber_id, Score.CANDIDATE, values)
        rows.append(
            Score(
                flag=flag, control=control, transcriber_id=t.transcriber_id, source=Score.CANDIDATE, **values
            )
        )
    Score.objects.bulk_create(rows)
    aggregates.flag_entered(flag.pk)
    # Scores from reused transcriptions may complete an item: the judge is asked as when a transcription ends.
    reused_lines = {line.pk for _, line, _, _ in reused}
    ask_picks(reused_lines)
    scores_written(flag.organization_id, reused_lines)


def _write_live(flag: Flag, items, live_id: int) -> None:
    """The live scores of new (control or None, live text, expected text) items, written in one statement, with
    no totals: the caller counts the flag afterwards."""
    if not items:
        return
    rows = []
    for control, text, expected in items:
        values = score_values(expected, text)
        values["csv_cells"] = csv_cells(live_id, Score.LIVE, values)
        rows.append(Score(flag=flag, control=control, transcriber_id=live_id, source=Score.LIVE, **values))
    Score.objects.bulk_create(rows)
    results_changed(flag.bank_id)


def _transcriptions(organization_id: int, lines, transcriber_ids) -> dict[int, list[Transcription]]:
    """Make sure each (line, transcriber) has a transcription, queueing the missing ones; gives the finished
    ones (done or failed) by line id."""
    existing = {
        (t.line_id, t.transcriber_id): t
        for t in Transcription.objects.filter(line__in=lines, transcriber_id__in=transcriber_ids)
    }
    new, finished = [], {}
    for line in lines:
        for tid in transcriber_ids:
            found = existing.get((line.pk, tid))
            if found is None:
                new.append(Transcription(organization_id=organization_id, line=line, transcriber_id=tid))
            elif found.status in Transcription.FINISHED:
                finished.setdefault(line.pk, []).append(found)
    Transcription.objects.bulk_create(new, ignore_conflicts=True)
    if new:
        transaction.on_commit(lambda: handles.pump(organization_id))
    return finished


def queue_lines(organization_id: int, lines, transcriber_ids) -> None:
    """Make sure each (line, transcriber) has a transcription; where one has finished already, score every item on
    its line at once (a candidate added to a bank whose flags are counted: each score's totals follow it)."""
    finished = _transcriptions(organization_id, list(lines), transcriber_ids)
    for found in finished.values():
        for transcription in found:
            score_transcription(transcription)
    # Scores from reused transcriptions may complete an item: the judge is asked as when a transcription ends.
    reused_lines = list(finished)  # the line ids
    ask_picks(reused_lines)
    scores_written(organization_id, reused_lines)


def ask_picks(line_ids) -> None:
    """Candidate scores were written on these lines: once that commits, ask for the judge's picks of every item on
    them (a queue task per line, work/picks.py). Nothing without a judge."""
    ids = sorted(set(line_ids))
    if ids and llm.judge_configured():
        for line_id in ids:
            handles.PICK_LINE.later(line_id)


def scores_written(organization_id: int, line_ids) -> None:
    """Candidate scores were written on these lines: once that commits, a task announces the flags they finished
    (work/events.py; nothing when no endpoint wants flag.scored)."""
    ids = sorted(set(line_ids))
    if ids and webhooks.wants(organization_id, events.FLAG_SCORED):
        handles.ANNOUNCE_SCORES.later(ids)


BACKFILL_CHUNK = 2000


def backfill_alignment() -> int:
    """Give every score stored before scores kept their alignment and CSV cells what it lacks of them: a scored
    one its confusion pairs, text key and word alignment, from its text and its item's expected text; every one
    its turn-table CSV cells (the recount migration runs this before the totals are rebuilt). Returns how many
    were filled."""
    columns = [
        "pk",
        "flag__expected_text",
        "control__expected_text",
        "transcriber_id",
        "source",
        "confusions",
        "text_key",
        *cells.COLUMNS,
    ]
    done, last = 0, 0
    while True:
        rows = list(
            Score.objects.filter(
                Q(text_key__isnull=True, failed=False) | Q(alignment="", failed=False) | Q(csv_cells=""),
                pk__gt=last,
            )
            .order_by("pk")
            .values(*columns)[:BACKFILL_CHUNK]
        )
        if not rows:
            return done
        filled = []
        for row in rows:
            expected = row["control__expected_text"]
            if expected is None:
                expected = row["flag__expected_text"]
            if not row["failed"] and (not row["alignment"] or row["text_key"] is None):
                pairs = [] if row["match"] else alignment.confusions(expected, row["hypothesis"])
                row["confusions"] = alignment.encode_confusions(pairs)
                row["text_key"] = alignment.text_key(row["hypothesis"])
                row["alignment"] = alignment.encode_steps(alignment.align(expected, row["hypothesis"]))
            row["csv_cells"] = csv_cells(row["transcriber_id"], row["source"], row)
            filled.append(
                Score(
                    pk=row["pk"],
                    **{f: row[f] for f in ("confusions", "text_key", "alignment", "csv_cells")},
                )
            )
        Score.objects.bulk_update(filled, ["confusions", "text_key", "alignment", "csv_cells"])
        done += len(filled)
        last = rows[-1]["pk"]


def backfill_entities() -> int:
    """Give every scored score stored before scores kept their entities (migration 0022) the entities of its item's
    expected text, each marked kept or lost in its text. Returns how many were filled."""
    done, last = 0, 0
    while True:
        rows = list(
            Score.objects.filter(failed=False, entities="", pk__gt=last)
            .order_by("pk")
            .values_list("pk", "flag__expected_text", "control__expected_text", "hypothesis")[:BACKFILL_CHUNK]
        )
        if not rows:
            return done
        filled = [
            Score(
                pk=pk,
                entities=entity_marks(flag_expected if control_expected is None else control_expected, text),
            )
            for pk, flag_expected, control_expected, text in rows
        ]
        Score.objects.bulk_update([s for s in filled if s.entities], ["entities"])
        done += sum(1 for s in filled if s.entities)
        last = rows[-1][0]
