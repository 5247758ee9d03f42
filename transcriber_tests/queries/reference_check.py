"""A check of the expected texts: the bank's scored lines in the window, flagged and control lines, whose expected
text the transcribers agree against (two or more candidates agree with each other after normalization but not
with it, or the live transcript and every candidate that scored the line do) or every candidate contradicts badly
(a WER of 1 or more each: a control's live transcript that is a repetition loop is one); aggregates.detail keeps
each line's mark. Newest first, each with what they agree on, who agrees, and who typed the expected text. A typo in an expected text
makes every candidate look wrong; these are the lines to read again. Listed on the bank's results page and in
the API; an edit re-scores the line as any edit does."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, IntegerField, Value

from oncore.transcribers.models import Transcriber

from ..models import Bank, ControlLine, Flag, Score
from .board import candidates_of
from .people import History, histories
from .window import clamp_window, window_start

SHOWN = 10  # on the results page; the API pages through all of them


@dataclass(frozen=True)
class Agreement:
    text: str  # what they agree on, as the first of them wrote it
    who: list  # transcribers' display names, the live transcript's first ("live: ...")
    with_live: bool  # the live transcript agrees too


@dataclass(frozen=True)
class ExpectedCheck:
    flag_id: int
    line_id: int
    call_id: int
    expected_text: str
    live_text: str
    joined_at: datetime
    agreements: list  # Agreement, the largest first
    history: History
    control_id: int | None = None  # a control line: its expected text is its live transcript
    # Where every candidate contradicts the expected text badly: (name, WER) of each, in the bank's order.
    contradicted_by: list = ()

    @property
    def is_control(self) -> bool:
        return self.control_id is not None

    @property
    def typed_by(self) -> str:
        return self.history.typed_by


def _agreements(rows, candidate_order, names) -> list[Agreement]:
    """The groups of the line's non-matching scored texts that agree (two or more candidates, or the live
    transcript with every candidate that scored)."""
    live = next((r for r in rows if r["source"] == Score.LIVE), None)
    scored = [r for r in rows if r["source"] == Score.CANDIDATE and r["transcriber_id"] in candidate_order]
    scored.sort(key=lambda r: candidate_order[r["transcriber_id"]])
    groups = defaultdict(list)
    for r in scored:
        if not r["match"]:
            groups[r["text_key"]].append(r)
    found = []
    for key, members in groups.items():
        with_live = bool(live and not live["match"] and live["text_key"] == key)
        everyone = with_live and len(members) == len(scored)
        if len(members) >= 2 or everyone:
            who = [names[r["transcriber_id"]] for r in members]
            if with_live:
                who.insert(0, f"live ({names[live['transcriber_id']]})")
            found.append(Agreement(members[0]["hypothesis"], who, with_live))
    return sorted(found, key=lambda a: (-len(a.who), -a.with_live))


def expected_checks(bank: Bank, window_days: int, *, offset: int = 0, limit: int = SHOWN):
    """(the lines to check, newest flag first, each flag's own line before its controls: `limit` from `offset`,
    as ExpectedCheck; how many there are in all). Six queries: the marked flags and controls (partial indexes
    hold only them), their count, the items' lines, their scores, the flags' histories."""
    since = window_start(clamp_window(window_days), bank.organization.zone)
    flags = Flag.objects.filter(bank=bank, joined_at__gte=since, check_expected=True)
    controls = ControlLine.objects.filter(flag__bank=bank, flag__joined_at__gte=since, check_expected=True)
    total = flags.count() + controls.count()
    if not total:
        return [], total
    page = list(
        flags.order_by()
        .annotate(when=F("joined_at"), flag=F("id"), control=Value(None, output_field=IntegerField()))
        .values_list("when", "flag", "control")
        .union(
            controls.order_by().annotate(when=F("flag__joined_at")).values_list("when", "flag_id", "id"),
            all=True,
        )
        .order_by("-when", "-flag", F("control").asc(nulls_first=True))[offset : offset + limit]
    )
    if not page:
        return [], total
    flag_rows = Flag.objects.select_related("line").in_bulk({f for _, f, _ in page})
    control_rows = ControlLine.objects.select_related("line").in_bulk({c for _, _, c in page if c})
    candidates = [c.transcriber for c in candidates_of(bank)]
    order = {t.pk: i for i, t in enumerate(candidates)}
    names = {t.pk: t.display_name for t in candidates}
    rows = defaultdict(list)
    for r in Score.objects.filter(flag__in=flag_rows, failed=False).values(
        "flag_id", "control_id", "source", "transcriber_id", "match", "text_key", "hypothesis", "wer"
    ):
        rows[r["flag_id"], r["control_id"]].append(r)
    live_ids = {r["transcriber_id"] for found in rows.values() for r in found if r["source"] == Score.LIVE}
    names.update(Transcriber.objects.filter(pk__in=live_ids - set(names)).values_list("pk", "display_name"))
    people = histories(flag_rows)
    out = []
    for _, flag_id, control_id in page:
        f, c = flag_rows[flag_id], control_rows.get(control_id)
        line = c.line if c else f.line
        item = rows[flag_id, control_id]
        scored = sorted(
            (r for r in item if r["source"] == Score.CANDIDATE and r["transcriber_id"] in order),
            key=lambda r: order[r["transcriber_id"]],
        )
        far = [(names[r["transcriber_id"]], r["wer"]) for r in scored] if _contradicted(scored) else []
        out.append(
            ExpectedCheck(
                f.pk,
                line.pk,
                line.call_id,
                c.expected_text if c else f.expected_text,
                line.text,
                f.joined_at,
                _agreements(item, order, names),
                people[f.pk],
                control_id,
                far,
            )
        )
    return out, total


def _contradicted(scored) -> bool:
    """Every candidate that scored the line contradicts its expected text badly (as aggregates.detail.contradicted,
    on the WERs as stored)."""
    return bool(scored) and all(r["wer"] is not None and r["wer"] >= 1 for r in scored)
