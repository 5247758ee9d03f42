"""Where a candidate wins: a bank's results by the tenant and by the assistant of its items' calls. A filter
(`Group`: one tenant, or one assistant) that the results' cards are recomputed under, and the tables of each
candidate's accuracy per tenant and per assistant, ★ the best of each row. Both read the per-day totals split by
tenant and assistant (GroupTotal, GroupPairTotal): a few rows per candidate, group and day, whatever the bank's
size."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Q, Sum

from oncore.accounts.models import Tenant
from oncore.calls.models import Assistant
from oncore.errors import find

from ..lib import scoring
from ..models import GroupPairTotal, GroupTotal, Score
from .totals import _days, summaries

TENANT, ASSISTANT = "tenant", "assistant"
BY = (TENANT, ASSISTANT)
MAX_GROUP_ROWS = 20  # rows of a table: the groups with the most lines; the page says how many more there are
NO_ASSISTANT = "no assistant"


@dataclass(frozen=True)
class Group:
    """One tenant or one assistant of the organization: the results are recomputed on its calls' items."""

    kind: str  # TENANT or ASSISTANT
    id: int
    name: str
    tenant_name: str = ""  # an assistant's tenant

    @property
    def key(self) -> str:
        """Part of the results' cache keys: "tenant:3"."""
        return f"{self.kind}:{self.id}"

    @property
    def label(self) -> str:
        """As the page names it: "tenant Bistro", "assistant Bookings (Bistro)"."""
        return f"{self.kind} {self.name}" + (f" ({self.tenant_name})" if self.tenant_name else "")

    def rows(self, qs):
        """The per-day total rows (GroupTotal, GroupPairTotal, LatencyTotal) of this group's calls."""
        if self.kind == TENANT:
            return qs.filter(tenant_id=self.id)
        return qs.filter(assistant_id=self.id).exclude(tenant_id=0)

    def call_filter(self, prefix: str = "") -> dict:
        """The group's calls as filter keywords, on a path to the call (`prefix`, e.g. "flag__line__call__")."""
        return {f"{prefix}{self.kind}_id": self.id}

    def calls(self) -> Q:
        """The calls of this group, as a filter of calls."""
        return Q(**self.call_filter())


def group_of(organization, tenant: int | None = None, assistant: int | None = None) -> Group | None:
    """The filter asked for: a tenant of the organization, or an assistant (of that tenant, when both are given);
    None for neither. An id of another organization, or an assistant of another tenant, is not found
    (oncore.errors.NotFound: the page's 404, the API's not_found)."""
    found_tenant = None
    if tenant is not None:
        found_tenant = find(Tenant.objects.filter(organization=organization), tenant, "tenant")
    if assistant is not None:
        assistants = Assistant.objects.filter(tenant__organization=organization).select_related("tenant")
        what = "assistant"
        if found_tenant is not None:
            assistants, what = (
                assistants.filter(tenant=found_tenant),
                f"assistant of tenant {found_tenant.name}",
            )
        a = find(assistants, assistant, what)
        return Group(ASSISTANT, a.pk, a.name, a.tenant.name)
    if found_tenant is not None:
        return Group(TENANT, found_tenant.pk, found_tenant.name)
    return None


def group_summaries(bank_id: int, since, until, group: Group) -> tuple[dict, dict]:
    """As queries.totals.summaries, on the group's calls only (its GroupTotal rows), in one query."""
    return summaries(bank_id, since, until, totals=group.rows(GroupTotal.objects.filter(bank_id=bank_id)))


def group_pair_counts(bank_id: int, since, until, a: int, b: int, group: Group) -> tuple[int, int, int]:
    """As queries.totals.pair_counts, on the group's calls only."""
    low, high = sorted((a, b))
    qs = group.rows(GroupPairTotal.objects.filter(bank_id=bank_id, low_id=low, high_id=high))
    found = _days(qs, since, until).aggregate(both=Sum("both"), lo=Sum("low_only"), hi=Sum("high_only"))
    both, lo, hi = (int(found[k] or 0) for k in ("both", "lo", "hi"))
    return (both, lo, hi) if a == low else (both, hi, lo)


# ---------------------------------------------------------------- the tables


@dataclass(frozen=True)
class GroupRow:
    group: Group
    lines: int  # the group's items (flagged and control lines) in the window
    cells: list  # per candidate, in the bank's order: scoring.CandidateSummary
    best: object | None  # the best candidate on the row (as the tag table); None when none got a line right


@dataclass(frozen=True)
class GroupTable:
    by: str  # TENANT or ASSISTANT
    candidates: list
    rows: list  # GroupRow, most lines first (at most MAX_GROUP_ROWS)
    more: int = 0  # groups left out past MAX_GROUP_ROWS
    groups: tuple = ()  # every group with lines in the window, most lines first: what the filter offers


def group_tables(bank, since, until, candidates) -> dict[str, GroupTable]:
    """{TENANT: table, ASSISTANT: table}: each candidate's (transcribers, in the bank's order) accuracy with n on
    the window's items of each tenant and of each assistant of the bank's calls, ★ the best of each row, the
    groups with the most lines first. One query of the per-day group totals (grouped by tenant and assistant,
    then summed both ways here) and one for the assistants' names with their tenants' (a third only for a tenant
    whose calls have no assistant)."""
    rows = (
        _days(GroupTotal.objects.filter(bank_id=bank.pk), since, until)
        .values("tenant_id", "assistant_id", "source", "transcriber_id")
        .annotate(s=Sum("scored"), m=Sum("matches"), f=Sum("failed"), u=Sum("wer_units"))
    )
    ids = {t.pk for t in candidates}
    lines = {TENANT: defaultdict(int), ASSISTANT: defaultdict(int)}
    counts = {TENANT: defaultdict(lambda: [0, 0, 0, 0]), ASSISTANT: defaultdict(lambda: [0, 0, 0, 0])}
    tenant_of = {}
    for r in rows:
        keys = {TENANT: r["tenant_id"], ASSISTANT: r["assistant_id"]}
        if r["assistant_id"]:
            tenant_of[r["assistant_id"]] = r["tenant_id"]
        for by, gid in keys.items():
            if r["source"] == Score.LIVE:  # every item has one live score: the group's lines
                lines[by][gid] += int(r["s"] or 0) + int(r["f"] or 0)
            elif r["transcriber_id"] in ids:
                total = counts[by][(gid, r["transcriber_id"])]
                for k, field in enumerate("smfu"):
                    total[k] += int(r[field] or 0)
    names = _names({g for g, n in lines[TENANT].items() if n}, {g for g, n in lines[ASSISTANT].items() if n})
    return {by: _table(by, candidates, lines[by], counts[by], names[by]) for by in BY}


def _table(by, candidates, lines, counts, groups) -> GroupTable:
    ordered = sorted(groups, key=lambda g: (-lines[g], groups[g].name.casefold(), g))
    out = []
    for gid in ordered[:MAX_GROUP_ROWS]:
        cells = [scoring.summary_row(t.pk, *counts.get((gid, t.pk), (0, 0, 0, 0))) for t in candidates]
        leader = scoring.rank(cells, 0).leader
        best = next((c for c in cells if c.candidate == leader), None)
        shown = next((t for t in candidates if t.pk == leader), None) if best and best.matches else None
        out.append(GroupRow(groups[gid], lines[gid], cells, shown))
    return GroupTable(
        by, list(candidates), out, max(0, len(ordered) - MAX_GROUP_ROWS), tuple(groups[g] for g in ordered)
    )


def _names(tenant_ids, assistant_ids) -> dict[str, dict[int, Group]]:
    """The tenants and assistants with these ids as Groups, by id; an assistant id 0 is the calls with none, and
    an id no longer found (deleted since: `manage.py rebuild_results` recounts its calls) is named as such."""
    tenants, assistants = {}, {}
    for a in Assistant.objects.filter(pk__in=assistant_ids - {0}).select_related("tenant"):
        assistants[a.pk] = Group(ASSISTANT, a.pk, a.name, a.tenant.name)
        if a.tenant_id in tenant_ids:
            tenants[a.tenant_id] = Group(TENANT, a.tenant_id, a.tenant.name)
    missing = tenant_ids - set(tenants)
    if missing:
        tenants.update((t.pk, Group(TENANT, t.pk, t.name)) for t in Tenant.objects.filter(pk__in=missing))
    for by, ids, found in ((TENANT, tenant_ids, tenants), (ASSISTANT, assistant_ids, assistants)):
        for gid in ids - set(found):
            found[gid] = Group(
                by, gid, NO_ASSISTANT if by == ASSISTANT and gid == 0 else f"{by} {gid} (deleted)"
            )
    return {TENANT: tenants, ASSISTANT: assistants}
