"""Why a candidate fails and how far to trust a lead, against the rows they come from: the confusion pairs equal a
direct count of the stored scores' alignments, the call totals equal the calls of the scores (and the bootstrap
read from them equals the pure one on those calls), the check of the expected texts finds a deliberately mistyped
expected text and not the others, and every flag keeps who made it and each edit."""

import random
from collections import Counter, defaultdict

import pytest

from oncore.transcribers.models import Transcriber
from tests.fixtures import make_call
from transcriber_tests import actions, aggregates, queries
from transcriber_tests.actions import scores
from transcriber_tests.lib import alignment
from transcriber_tests.lib import trust as uncertainty
from transcriber_tests.models import CallTotal, Flag, FlagEdit, Score, Transcription
from transcriber_tests.queries import confusion, reference_check, trust

pytestmark = pytest.mark.django_db

MISTYPED = "table for fur at eight thirty"  # the caller said "four"


def candidates(n=3):
    return [
        Transcriber.objects.create(
            slug=f"trust-{i}", provider=Transcriber.GENERIC, model=f"t{i}", display_name=f"Trust {i}"
        )
        for i in range(n)
    ]


def make_bank(org, transcribers, name="Trust", controls=1):
    bank = actions.do_create_bank(org, name=name, controls_per_flag=controls)
    for t in transcribers:
        actions.do_add_candidate(bank, t, confirmed=True)
    return bank


def finish(script):
    """Every waiting transcription comes back: the text `script` gives for (its line's live text, transcriber),
    else the line's live text."""
    for t in Transcription.objects.filter(status__in=["queued", "running"]).select_related(
        "line", "transcriber"
    ):
        text = script.get((t.line.text, t.transcriber.model), t.line.text)
        Transcription.objects.filter(pk=t.pk).update(status=Transcription.DONE, text=text, cost="0.000100")
        t.refresh_from_db()
        scores.score_transcription(t)


@pytest.fixture
def checked(org, tenant, live_transcriber):
    """A bank of three candidates with a mistyped flag (two candidates agree on what was said, against it), a flag
    its candidates get right, one they each get wrong in their own way; and a bank of one candidate where the live
    transcript and the candidate agree against a typo."""
    t = candidates(3)
    bank = make_bank(org, t)
    call = make_call(
        tenant,
        live_transcriber,
        caller_texts=[
            "tabel for for at ate thirty",
            "my number is 0 8 7",
            "see you tuesday",
            "thank you bye",
        ],
    )
    lines = list(call.lines.filter(speaker="caller").order_by("position"))
    rng = random.Random(1)
    mistyped = actions.do_flag_line(lines[0], MISTYPED, bank=bank, rng=rng)
    right = actions.do_flag_line(lines[1], "my number is oh eight seven", bank=bank, rng=rng)
    scattered = actions.do_flag_line(lines[2], "see you on tuesday", bank=bank, rng=rng)
    finish(
        {
            (lines[0].text, "t0"): "Table for four at eight thirty.",
            (lines[0].text, "t1"): "table for four at eight thirty",
            (lines[0].text, "t2"): "table for for at eight thirty",
            (lines[1].text, "t0"): "my number is oh eight seven",
            (lines[1].text, "t1"): "my number is 0 8 7",
            (lines[1].text, "t2"): "My number is oh eight seven",
            (lines[2].text, "t0"): "see you tuesday",
            (lines[2].text, "t1"): "sea you on tuesday",
            (lines[2].text, "t2"): "see you on thursday",
        }
    )
    solo_t = Transcriber.objects.create(
        slug="trust-solo", provider=Transcriber.GENERIC, model="solo", display_name="Solo"
    )
    solo = make_bank(org, [solo_t], name="Solo", controls=0)
    other = make_call(tenant, live_transcriber, caller_texts=["book it for nine"])
    typo = actions.do_flag_line(other.lines.get(position=0), "book it for nein", bank=solo)
    finish({})  # the candidate writes what the live transcript says
    return bank, solo, {"mistyped": mistyped, "right": right, "scattered": scattered, "typo": typo}


def test_the_reference_check_finds_the_mistyped_expected_text_and_not_the_others(checked):
    bank, solo, flags = checked
    found, total = reference_check.expected_checks(bank, 30)
    assert total == 1 and [c.flag_id for c in found] == [flags["mistyped"].pk]
    (agreement,) = found[0].agreements
    assert agreement.who == ["Trust 0", "Trust 1"] and not agreement.with_live
    assert alignment.text_key(agreement.text) == alignment.text_key("table for four at eight thirty")
    # One candidate and the live transcript agree against a typo.
    found, total = reference_check.expected_checks(solo, 30)
    assert [c.flag_id for c in found] == [flags["typo"].pk]
    assert found[0].agreements[0].with_live and found[0].agreements[0].who[0].startswith("live (")
    # The marks equal the rule on the scores, and a rebuild finds nothing to set right.
    assert set(Flag.objects.filter(check_expected=True).values_list("pk", flat=True)) == {
        flags["mistyped"].pk,
        flags["typo"].pk,
    }
    assert not aggregates.rebuild(fix=False).any


def test_editing_the_mistyped_text_rescores_it_and_takes_it_off_the_list(checked, admin_user):
    bank, _, flags = checked
    actions.do_edit_flag(flags["mistyped"], expected_text="table for four at eight thirty", user=admin_user)
    assert reference_check.expected_checks(bank, 30) == ([], 0)
    matched = Score.objects.filter(
        flag=flags["mistyped"], control__isnull=True, source="candidate", match=True
    )
    assert sorted(matched.values_list("transcriber__model", flat=True)) == ["t0", "t1"]
    edit = FlagEdit.objects.get(flag=flags["mistyped"])
    assert (edit.field, edit.old, edit.new, edit.by, edit.by_name) == (
        "expected_text",
        MISTYPED,
        "table for four at eight thirty",
        admin_user,
        admin_user.username,
    )
    assert not aggregates.rebuild(fix=False).any


def _direct_pairs(bank):
    """Each candidate's confusion pairs counted straight from the stored scores' texts."""
    counts = defaultdict(Counter)
    for s in Score.objects.filter(flag__bank=bank, source="candidate", failed=False).select_related(
        "flag", "control"
    ):
        expected = s.control.expected_text if s.control_id else s.flag.expected_text
        for pair in alignment.confusions(expected, s.hypothesis):
            counts[s.transcriber_id][pair] += 1
    return counts


def test_the_confusion_pairs_equal_a_direct_count(checked):
    bank, _, flags = checked
    direct = _direct_pairs(bank)
    found = confusion.confusion_pairs(bank, 30, limit=None)
    for entry in found:
        assert {(p.kind, p.expected_word, p.heard_word): p.n for p in entry.pairs} == dict(
            direct[entry.transcriber.pk]
        )
        assert entry.errors == sum(direct[entry.transcriber.pk].values())
        assert [p.n for p in entry.pairs] == sorted((p.n for p in entry.pairs), reverse=True)
    t2 = next(e for e in found if e.transcriber.model == "t2")
    assert ("substitution", "fur", "for") in {(p.kind, p.expected_word, p.heard_word) for p in t2.pairs}
    # A pair opens the turn-table lines where it happens, and only those.
    token = alignment.pair_token("substitution", "tuesday", "thursday")
    items = queries.turn_items(bank, 30, pair=(t2.transcriber.pk, token))
    rows = queries.turn_rows(bank, list(items), list(queries.candidates_of(bank)))
    assert [(r.flag_id, r.control_id) for r in rows] == [(flags["scattered"].pk, None)]
    # After an edit (a re-score) and a delete, the totals still equal the scores.
    actions.do_edit_flag(flags["right"], expected_text="my number is oh eight seven please")
    actions.do_delete_flag(flags["scattered"])
    direct = _direct_pairs(bank)
    for entry in confusion.confusion_pairs(bank, 30, limit=None):
        assert {(p.kind, p.expected_word, p.heard_word): p.n for p in entry.pairs} == dict(
            direct[entry.transcriber.pk]
        )
    assert not aggregates.rebuild(fix=False).any


def _direct_calls(bank):
    """{transcriber id: Counter((scored, matches) of each call)} straight from the scores (calls of one day)."""
    per_call = defaultdict(lambda: [0, 0])
    for s in Score.objects.filter(flag__bank=bank, source="candidate", failed=False).select_related(
        "flag__line"
    ):
        row = per_call[(s.transcriber_id, s.flag.line.call_id, s.flag.joined_at.date())]
        row[0] += 1
        row[1] += s.match
    out = defaultdict(Counter)
    for (tid, _, _), (scored, matches) in per_call.items():
        out[tid][(scored, matches)] += 1
    return out


def test_the_call_totals_are_the_calls_of_the_scores_and_feed_the_bootstrap(org, tenant, live_transcriber):
    t = candidates(2)
    bank = make_bank(org, t)
    rng = random.Random(4)
    script = {}
    for c in range(6):
        texts = [f"line {c} {w} please" for w in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")]
        call = make_call(tenant, live_transcriber, caller_texts=texts, seconds_per_line=1.0)
        for line in call.lines.filter(speaker="caller").order_by("position")[: 1 + c % 3]:
            actions.do_flag_line(line, line.text.replace("please", "thanks"), bank=bank, rng=rng)
            script[(line.text, "t0")] = line.text.replace("please", "thanks")
            script[(line.text, "t1")] = line.text.replace("please", "thanks") if c % 2 else line.text
    finish(script)
    direct = _direct_calls(bank)
    stored = defaultdict(Counter)
    for row in CallTotal.objects.filter(bank=bank, calls__gt=0):
        stored[row.transcriber_id][(row.scored, row.matches)] += row.calls
    assert dict(stored) == dict(direct)
    found = trust.bank_trust(bank, 30)
    for row in found.rows:
        histogram = [(s, m, n) for (s, m), n in direct[row.transcriber.pk].items()]
        pure = uncertainty.accuracy_bootstrap(histogram)
        assert (row.calls.low, row.calls.high) == pytest.approx((pure.low, pure.high))
        assert row.calls.calls == 6
    assert found.lead_calls is not None and found.lead_calls.calls == 6
    assert found.plan is not None and found.items == queries.totals.item_count(
        bank.pk, queries.window_start(30)
    )
    # Moves and deletes keep them; a rebuild agrees.
    flags = list(Flag.objects.filter(bank=bank).order_by("pk"))
    actions.do_move_flag(flags[0], None)
    actions.do_delete_flag(flags[1])
    assert not aggregates.rebuild(fix=False).any


def test_who_made_and_who_edited_a_flag_are_kept(checked, admin_user, org_key, org):
    from oncore.accounts.models import ApiKey
    from transcriber_tests.queries import people

    bank, _, flags = checked
    flag = flags["right"]
    key = ApiKey.objects.get(organization=org)
    actions.do_edit_flag(flag, tags=["time", "name"], note="caller spelled it", user=admin_user)
    actions.do_edit_flag(flag, expected_text="my number is oh eight seven please", key=key)
    history = people.histories([flag.pk])[flag.pk]
    assert [(e.field, e.by) for e in history.edits] == [
        ("tags", admin_user.username),
        ("note", admin_user.username),
        ("expected_text", people.key_name(key)),
    ]
    assert history.edits[0].new == "time name"
    assert history.typed_by == people.key_name(key)
    # Nothing changed, nothing recorded.
    actions.do_edit_flag(flag, note="caller spelled it", user=admin_user)
    assert FlagEdit.objects.filter(flag=flag).count() == 3
