"""A check of the expected texts: the bank's flagged lines in the window whose expected text the transcribers
agree against (two or more candidates agree with each other after normalization but not with it, or the live
transcript and every candidate that scored the line do; aggregates.detail keeps each flag's mark), newest
first, each with what they agree on, who agrees, and who typed the expected text. A typo in an expected text
makes every candidate look wrong; these are the lines to read again. Listed on the bank's results page and in
the API; an edit re-scores the line as any edit does."""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from oncore.transcribers.models import Transcriber

from ..models import Bank, Flag, Score
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
    """(the flags to check, newest first: `limit` from `offset`, as ExpectedCheck; how many there are in all).
    Four queries: the marked flags (a partial index holds only them), their count, their lines' scores, their
    histories."""
    since = window_start(clamp_window(window_days), bank.organization.zone)
    marked = Flag.objects.filter(bank=bank, joined_at__gte=since, check_expected=True)
    total = marked.count()
    flags = list(
        marked.order_by("-joined_at", "-id").select_related("line")[offset : offset + limit] if total else []
    )
    if not flags:
        return [], total
    candidates = [c.transcriber for c in candidates_of(bank)]
    order = {t.pk: i for i, t in enumerate(candidates)}
    names = {t.pk: t.display_name for t in candidates}
    rows = defaultdict(list)
    for r in Score.objects.filter(flag__in=flags, control__isnull=True, failed=False).values(
        "flag_id", "source", "transcriber_id", "match", "text_key", "hypothesis"
    ):
        rows[r["flag_id"]].append(r)
    live_ids = {r["transcriber_id"] for found in rows.values() for r in found if r["source"] == Score.LIVE}
    names.update(Transcriber.objects.filter(pk__in=live_ids - set(names)).values_list("pk", "display_name"))
    people = histories(f.pk for f in flags)
    out = []
    for f in flags:
        agreements = _agreements(rows[f.pk], order, names)
        out.append(
            ExpectedCheck(
                f.pk,
                f.line_id,
                f.line.call_id,
                f.expected_text,
                f.line.text,
                f.joined_at,
                agreements,
                people[f.pk],
            )
        )
    return out, total
