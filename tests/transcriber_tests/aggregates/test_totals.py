"""The per-day totals (transcriber_tests/aggregates/) against the scores they sum: after any mix of flags made, scored, edited,
moved and deleted and candidates added and removed, every bank's results, paired test, control mix, turn-table
counts, entities right and disagree marks equal what the pure core and a direct count give, and a rebuild finds no drift."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from oncore.calls.models import Call
from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from transcriber_tests import actions, aggregates, queries
from transcriber_tests.actions import scores
from transcriber_tests.lib import entities, scoring
from transcriber_tests.models import ControlLine, Flag, Score, ScoreTotal, Transcription

WORDS = ["table", "for", "four", "at", "eight", "thirty"]
EXPECTED = ["table for four", "eight thirty", "table for four at eight thirty"]
TEXTS = [None, "", "...", "table for four", "Table, for four!", "eight thirty", "table for", "four at eight"]

KINDS = ["flag"] * 4 + ["finish"] * 5 + ["edit", "move", "delete", "add", "remove"]


def _tags(rng) -> list[str]:
    return rng.sample(["name", "time", "spelling"], rng.randrange(3))


def random_steps(seed: int, n: int = 30) -> list[tuple]:
    """A sequence of writes drawn from the seed: mostly flags and finished transcriptions, every kind possible."""
    import random

    rng = random.Random(seed)
    draw = {
        "flag": lambda: (
            rng.randrange(12),
            rng.choice([0, 1, None]),
            rng.randrange(len(EXPECTED)),
            _tags(rng),
        ),
        "finish": lambda: (rng.randrange(100), rng.randrange(len(TEXTS))),
        "edit": lambda: (rng.randrange(100), rng.randrange(len(EXPECTED)), _tags(rng)),
        "move": lambda: (rng.randrange(100), rng.choice([0, 1, None])),
        "delete": lambda: (rng.randrange(100),),
        "add": lambda: (rng.randrange(2), rng.randrange(4)),
        "remove": lambda: (rng.randrange(2), rng.randrange(4)),
    }
    return [(kind, *draw[kind]()) for kind in (rng.choice(KINDS) for _ in range(n))]


def _item_outcomes(bank, source):
    """scoring.Outcome of every stored score of this source in the bank, as the pure core would score it."""
    out = []
    for s in Score.objects.filter(flag__bank=bank, source=source).select_related("flag", "control"):
        expected = s.control.expected_text if s.control_id else s.flag.expected_text
        hypothesis = None if s.failure == Score.ERROR else s.hypothesis
        out.append(scoring.outcome(s.transcriber_id, (s.flag_id, s.control_id), expected, hypothesis))
    return out


def check_bank(bank):
    bank.refresh_from_db()
    results = queries.bank_results(bank)
    ids = [c.transcriber_id for c in queries.candidates_of(bank)]
    outcomes = _item_outcomes(bank, Score.CANDIDATE)
    controls = {o.line_id for o in outcomes if o.line_id[1] is not None}  # (flag id, control id)
    pure = scoring.summarize(outcomes, ids, bank.threshold, controls)
    assert [card.summary for card in results.cards] == list(pure.rows)
    assert (results.leader.transcriber.pk if results.leader else None) == pure.leader
    if pure.leader is not None and pure.runner_up is not None:
        paired = scoring.compare_leader(outcomes, pure.leader, pure.runner_up)
        lead = results.lead
        assert (lead.both_scored, lead.leader_only_right, lead.runner_up_only_right) == (
            paired.both_scored,
            paired.leader_only_right,
            paired.runner_up_only_right,
        )
    live = _item_outcomes(bank, Score.LIVE)
    live_ids = sorted({o.candidate for o in live})
    live_controls = {o.line_id for o in live if o.line_id[1] is not None}
    assert sorted(s for _, s, _ in results.live_rows) == sorted(
        scoring.summarize(live, live_ids, 0, live_controls).rows
    )
    flags = Flag.objects.filter(bank=bank)
    mix = {}
    for flag in flags:
        n = flag.controls.count()
        mix[n] = mix.get(n, 0) + 1
    assert dict(results.control_mix) == mix
    for item in Score.objects.filter(flag__bank=bank, source=Score.LIVE):
        scores = Score.objects.filter(flag_id=item.flag_id, control_id=item.control_id)
        assert item.disagree == aggregates.disagrees(list(scores), set(ids))
    for kind in ("", "flags", "controls"):
        for disagree in (False, True):
            items = queries.turn_items(bank, 30, kind=kind, disagree=disagree)
            assert items.count() == len(list(items))
    assert queries.banks_list(bank.organization).get(pk=bank.pk).n_flags == flags.count()
    # Entities right, per candidate and category, from the entity totals as from the scores' own marks.
    marked = Score.objects.filter(flag__bank=bank, source=Score.CANDIDATE, failed=False).exclude(entities="")
    direct = {
        t: entities.tally(marked.filter(transcriber_id=t).values_list("entities", flat=True)) for t in ids
    }
    assert queries.entities.bank_entities(bank, ids, 30) == direct
    since = queries.window_start(30)
    per_tag, live = (
        queries.totals.tag_summaries(bank.pk, since),
        queries.totals.tag_summaries(bank.pk, since, source="live"),
    )
    for tag in ("name", "time", "spelling"):
        tagged = flags.filter(tags__contains=f",{tag},")
        on_tag = [o for o in outcomes if o.line_id[1] is None and tagged.filter(pk=o.line_id[0]).exists()]
        pure_rows = {r.candidate: r for r in scoring.summarize(on_tag, ids, 0).rows if r.scored or r.failed}
        assert {t: r for t, r in per_tag.get(tag, {}).items() if t in ids} == pure_rows
        assert sum(r.scored + r.failed for r in live.get(tag, {}).values()) == tagged.count()


def _finish(transcription, text):
    done = text is not None
    Transcription.objects.filter(pk=transcription.pk).update(
        status=Transcription.DONE if done else Transcription.FAILED,
        text=text or "",
        cost="0.001200" if done else None,
    )
    transcription.refresh_from_db()
    scores.score_transcription(transcription)


def run(org, tenant, live, transcribers, steps):
    banks = [actions.do_create_bank(org, name=f"Bank {i}", controls_per_flag=i + 1) for i in range(2)]
    actions.do_add_candidate(banks[0], transcribers[0], confirmed=True)
    actions.do_add_candidate(banks[0], transcribers[1], confirmed=True)
    actions.do_add_candidate(banks[1], transcribers[2], confirmed=True)
    calls = [make_call(tenant, live, caller_texts=WORDS, seconds_per_line=1.0) for _ in range(2)]
    lines = [line for call in calls for line in call.lines.filter(speaker="caller").order_by("position")]
    for step in steps:
        kind, *args = step
        flags = list(Flag.objects.order_by("pk"))
        try:
            if kind == "flag":
                bank = banks[args[1]] if args[1] is not None else None
                actions.do_flag_line(
                    lines[args[0]], EXPECTED[args[2]], bank=bank, tags=args[3], confirm_matches_live=True
                )
            elif kind == "finish":
                waiting = list(Transcription.objects.filter(status__in=["queued", "running"]).order_by("pk"))
                if waiting:
                    _finish(waiting[args[0] % len(waiting)], TEXTS[args[1]])
            elif kind == "edit" and flags:
                flag = flags[args[0] % len(flags)]
                actions.do_edit_flag(
                    flag, expected_text=EXPECTED[args[1]], tags=args[2], confirm_matches_live=True
                )
            elif kind == "move" and flags:
                bank = banks[args[1]] if args[1] is not None else None
                actions.do_move_flag(flags[args[0] % len(flags)], bank)
            elif kind == "delete" and flags:
                actions.do_delete_flag(flags[args[0] % len(flags)])
            elif kind == "add":
                actions.do_add_candidate(banks[args[0]], transcribers[args[1]], confirmed=True)
            elif (
                kind == "remove"
                and banks[args[0]].candidates.filter(transcriber=transcribers[args[1]]).exists()
            ):
                actions.do_remove_candidate(banks[args[0]], transcribers[args[1]])
        except actions.errors.ActionError:
            pass  # a refusal (a line flagged twice, a candidate added twice) changes nothing
    for bank in banks:
        check_bank(bank)
    drift = aggregates.rebuild(fix=False)
    assert not drift.any, drift
    for call in Call.objects.all():
        assert (call.n_lines, call.n_flags) == (
            call.lines.count(),
            Flag.objects.filter(line__call=call).count(),
        )


@pytest.mark.django_db
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.integers(0, 2**32))
@example(  # every kind of write at least once, on items that have scores
    plan=[
        ("flag", 0, 0, 0, ["name"]),
        ("flag", 6, 0, 1, ["time", "name"]),
        ("flag", 8, 1, 2, []),
        *[("finish", i, i % len(TEXTS)) for i in range(12)],
        ("edit", 0, 2, ["spelling"]),
        ("move", 1, 1),
        ("finish", 0, 3),
        ("add", 1, 0),
        ("finish", 1, 4),
        ("remove", 0, 1),
        ("move", 2, None),
        ("delete", 0),
        ("flag", 3, 0, 0, ["time"]),
        ("finish", 2, 5),
    ]
)
def test_it_keeps_every_total_equal_to_the_scores_under_any_mix_of_writes(
    org, tenant, live_transcriber, plan
):
    steps = plan if isinstance(plan, list) else random_steps(plan)
    transcribers = [
        Transcriber.objects.get_or_create(
            slug=f"agg-{i}", defaults={"provider": "generic", "model": f"m{i}", "display_name": f"Agg {i}"}
        )[0]
        for i in range(4)
    ]
    with transaction.atomic():
        run(org, tenant, live_transcriber, transcribers, steps)
        transaction.set_rollback(True)


def test_it_keeps_the_totals_through_a_real_queue_run(flag, bank):
    """The fixture's flag went through the real queue (a worker's finish and score): the totals agree."""
    check_bank(bank)
    assert not aggregates.rebuild(fix=False).any


def test_the_command_reports_drift_and_rebuilds_the_totals(flag, bank):
    total = ScoreTotal.objects.filter(bank=bank, source=Score.CANDIDATE).first()
    ScoreTotal.objects.filter(pk=total.pk).update(matches=total.matches + 5, wer_units=0)
    Call.objects.filter(pk=flag.line.call_id).update(n_lines=0, n_flags=7)
    live = Score.objects.filter(flag=flag, source=Score.LIVE, control__isnull=True)
    assert live.get().disagree  # one candidate matched, the other did not
    live.update(disagree=False)

    out = StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("rebuild_results", "--check", stdout=out)
    assert exited.value.code == 1
    report = out.getvalue()
    assert "score totals: 1 row" in report and "calls: 1" in report and "disagree marks: 1" in report
    assert ScoreTotal.objects.get(pk=total.pk).matches == total.matches + 5  # --check changes nothing

    out = StringIO()
    call_command("rebuild_results", stdout=out)
    assert "rebuilt" in out.getvalue()
    check_bank(bank)
    out = StringIO()
    call_command("rebuild_results", "--check", stdout=out)
    assert "no drift" in out.getvalue()


def test_it_counts_a_window_in_whole_days(bank, flag):
    """The 30-day window is today and the 29 days before it: a flag that joined just after midnight 29 days ago
    is in it; one that joined the evening before is not."""
    from datetime import UTC, datetime, time, timedelta

    from django.utils import timezone

    today = timezone.now().astimezone(UTC).date()
    inside = datetime.combine(today - timedelta(days=29), time(0, 1), UTC)
    assert queries.window_start(30) <= inside
    assert queries.window_start(30) > inside - timedelta(minutes=2)


def test_a_control_is_counted_with_its_flag(bank, flag):
    assert ControlLine.objects.filter(flag=flag).count() == 1
    assert queries.turn_items(bank, 30, kind="controls").count() == 1
    assert queries.turn_items(bank, 30).count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_turn_csv_reads_one_snapshot_while_flags_come_and_go(org, tenant, monkeypatch):
    """A flag made and another deleted while the CSV streams (from another connection) neither break the three
    streams apart nor show up half."""
    import threading

    from django.db import connection

    from transcriber_tests.actions.synthetic import fill_bank
    from transcriber_tests.queries import turns
    from transcriber_tests.shapes import exports

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: another connection writes while the export reads (CI runs it)")
    monkeypatch.setattr(turns, "FETCH_ROWS", 2)
    monkeypatch.setattr(exports, "FETCH_ITEMS", 2)
    bank = fill_bank(org, flags=6, candidates=2, name="Snapshot")
    rows = exports.turn_csv_rows(bank, 30)
    first = next(rows)

    def meanwhile():
        from oncore.calls.models import Line

        oldest = Flag.objects.filter(bank=bank).order_by("created_at", "id").first()
        actions.do_delete_flag(oldest)
        line = Line.objects.filter(call__tenant=tenant, flag__isnull=True, control_uses__isnull=True).first()
        Flag.objects.create(organization=org, line=line, bank=bank, expected_text="made meanwhile")
        connection.close()

    writer = threading.Thread(target=meanwhile)
    writer.start()
    writer.join()
    lines = "".join([first, *rows]).splitlines()
    assert len(lines) == 6 * 2 * 3  # six flags, each with one control; two candidates and the live transcript
    assert not any("made meanwhile" in line for line in lines)
