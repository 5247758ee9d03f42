"""The calls screen and a call's page: the calls list in keyset pages, a call's lines with why each cannot be
flagged, and a line's clip."""

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import Q

from oncore import audio
from oncore.calls.models import Assistant, Call, Line
from oncore.transcribers.models import Transcriber

from .. import errors
from ..models import Flag
from .filters import where
from .flags import flag_results
from .lines import live_transcriber_of, why_not_flaggable
from .people import new_history
from .window import EPOCH, _midnight


def catalogue(*, enabled: bool | None = None, provider: str = ""):
    """The transcribers of the catalogue by display name: all, or those a bank can add (`enabled`), or one
    provider's."""
    return where(
        Transcriber.catalogue().order_by("display_name", "id"),
        enabled=enabled,
        provider__iexact=provider or None,
    )


def assistants_of(organization, *, tenant: int | None = None):
    """The assistants of the organization's tenants (or of one), by name, with their tenant and transcriber."""
    qs = Assistant.objects.filter(tenant__organization=organization).select_related("tenant", "transcriber")
    return where(qs, tenant_id=tenant).order_by("name", "id")


def calls_of(organization):
    """The organization's calls, with their tenant (and its organization: the timezone a call's days are in),
    assistant and live transcriber."""
    return Call.objects.filter(tenant__organization=organization).select_related(
        "tenant__organization", "assistant", "live_transcriber"
    )


def calls_list(
    organization,
    *,
    tenant=None,
    assistant=None,
    date_from=None,
    date_to=None,
    has_flags=None,
    external_id=None,
    after=None,
):
    """The organization's calls, newest first, each with its number of lines and of flagged lines (counters
    stored on the call). Filters: a tenant or assistant id, the days (UTC) it started between, has_flags (True:
    only calls with a flagged line; False: only without; None: both) and the caller system's external_id.
    `after` (a CallCursor) starts the list after that call: keyset pages, as quick deep in the list as at its
    start. Every filter reads an index in the list's order (see Call.Meta.indexes)."""
    qs = where(
        calls_of(organization),
        external_id=external_id,
        tenant_id=tenant,
        assistant_id=assistant,
        started_at__gte=_midnight(date_from),
        started_at__lt=_midnight(date_to, days=1),
    )
    if has_flags is not None:
        qs = qs.filter(n_flags__gt=0) if has_flags else qs.filter(n_flags=0)
    if after is not None:
        qs = qs.filter(Q(started_at__lt=after.started_at) | Q(started_at=after.started_at, pk__lt=after.pk))
    return qs.order_by("-started_at", "-id")


_CURSOR = re.compile(r"(-?[0-9]{1,18})_([0-9]{1,18})")


@dataclass(frozen=True)
class CallCursor:
    """Where a keyset page of calls ends: the last call's start (to the microsecond) and id. Written in URLs and
    the API as "<microseconds since 1970>_<id>"."""

    started_at: datetime
    pk: int

    @classmethod
    def of(cls, call) -> "CallCursor":
        return cls(call.started_at, call.pk)

    @classmethod
    def parse(cls, text: str) -> "CallCursor":
        """ValueError when the text is not a cursor this site wrote."""
        found = _CURSOR.fullmatch(text or "")
        if not found:
            raise ValueError(f"{text!r} is not a calls cursor (it looks like 1732960000000000_123).")
        try:
            started_at = EPOCH + timedelta(microseconds=int(found[1]))
        except OverflowError:
            raise ValueError(f"{text!r} is not a calls cursor: its time is out of range.") from None
        return cls(started_at, int(found[2]))

    def __str__(self) -> str:
        return f"{(self.started_at - EPOCH) // timedelta(microseconds=1)}_{self.pk}"


@dataclass(frozen=True)
class CallsPage:
    calls: list
    next_after: CallCursor | None  # where the next page starts; None on the last page
    total: int  # calls matching the filters (every page)
    exact: bool  # False: `total` is the database's estimate ("about N calls")


# What the calls page's rows show of a call (call_rows.jinja): read alone, a page of 50 rows builds a few
# hundred fewer values (the transcriber's options and vocabulary, the tenant's organization).
ROW_COLUMNS = (
    "started_at",
    "recorded",
    "n_lines",
    "n_flags",
    "live_transcriber_name",
    "tenant__name",
    "assistant__name",
    "live_transcriber__display_name",
)


def calls_page(
    organization,
    *,
    after=None,
    offset: int = 0,
    size: int = 50,
    exact: bool = False,
    columns=None,
    **filters,
):
    """One keyset page of calls_list: `size` calls after the cursor (and `offset` more), the next page's cursor
    and the total, exact when asked, else counted only up to EXACT_COUNT_UP_TO (count_about). Three queries.
    `columns`: read only these of each call (ROW_COLUMNS: what the calls page shows)."""
    page = calls_list(organization, after=after, **filters)
    if columns:  # with only the relations they name
        related = sorted({c.split("__")[0] for c in columns if "__" in c})
        page = page.select_related(None).select_related(*related).only(*columns)
    rows = list(page[offset : offset + size + 1])
    calls, more = rows[:size], len(rows) > size
    matching = calls_list(organization, **filters)
    total, is_exact = (matching.count(), True) if exact else count_about(matching)
    return CallsPage(calls, CallCursor.of(calls[-1]) if more else None, total, is_exact)


EXACT_COUNT_UP_TO = 10_000


def count_about(queryset) -> tuple[int, bool]:
    """(how many rows, exact?): counted exactly up to EXACT_COUNT_UP_TO (a count that stops there), beyond that
    the database's estimate (PostgreSQL's planner; SQLite, local only, counts)."""
    exact = queryset.order_by()[: EXACT_COUNT_UP_TO + 1].count()
    if exact <= EXACT_COUNT_UP_TO or connection.vendor != "postgresql":
        return (exact if exact <= EXACT_COUNT_UP_TO else queryset.count()), True
    sql, params = queryset.order_by().query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return max(int(plan[0]["Plan"]["Plan Rows"]), exact), False


@dataclass(frozen=True)
class LineRow:
    """A line of a call as the call page and GET /calls/{id} show it."""

    line: Line
    flag: Flag | None
    problem: errors.ActionError | None  # why it cannot be flagged now, with the code flagging would give
    playable: bool  # its clip can be played

    @property
    def flaggable(self) -> bool:
        return self.problem is None


def line_rows(call: Call, lines=None) -> list[LineRow]:
    """Each line of a call in order (or only `lines`, of this call) with its flag, why it cannot be flagged and
    whether its clip plays. The recording is probed once, whatever the number of lines."""
    if lines is None:
        lines = list(call.lines.select_related("flag__bank").order_by("position"))
    live = live_transcriber_of(call)
    if live is not None and call.live_transcriber_id is None:
        # Found by name: keep it on this in-memory call so each line's check does not look it up again.
        call.live_transcriber = live
    recording_problem, duration = None, None
    if call.recorded and call.recording:
        try:
            duration = audio.probe(audio.stored(call.recording), label=f"call {call.pk}").duration_s
        except audio.AudioError as exc:
            recording_problem = str(exc)
    rows = []
    for line in lines:
        line.call = call
        flag = getattr(line, "flag", None)
        problem = why_not_flaggable(line, check_audio=False)
        if problem is None and recording_problem:
            problem = errors.RecordingUnavailable(recording_problem)
        elif problem is None and duration is not None and line.start_s >= duration:
            problem = errors.RecordingUnavailable("Its timing lies outside the recording.")
        elif problem is None and flag is not None:
            problem = errors.FlagExists(f"This line already has flag {flag.pk}; edit it.")
        playable = (
            call.recorded
            and bool(call.recording)
            and line.has_timing
            and not recording_problem
            and not (duration is not None and line.start_s >= duration)
        )
        rows.append(LineRow(line, flag, problem, playable))
    return rows


CALL_PAGE_LINES = 200  # lines per call page: the largest call allowed (ONCORE_MAX_LINES_PER_CALL) stays quick


def call_lines_page(call: Call, number=None, line_id: int | None = None):
    """One page of a call's lines in order, with their flags: page `number` (as Paginator.get_page reads it),
    or the page that holds line `line_id` when it is one of the call's."""
    lines = call.lines.select_related("flag__bank", "flag__box").order_by("position")
    if line_id is not None:
        position = lines.filter(pk=line_id).values_list("position", flat=True).first()
        if position is not None:
            number = lines.filter(position__lt=position).count() // CALL_PAGE_LINES + 1
    paginator = Paginator(lines, CALL_PAGE_LINES)
    if number in (None, "", 1, "1"):  # the first page: a call that fits on it is read without a count
        first = list(lines[: CALL_PAGE_LINES + 1])
        if len(first) <= CALL_PAGE_LINES:
            paginator.count = len(first)
            return Page(first, 1, paginator)
    return paginator.get_page(number)


def line_clip(line: Line) -> audio.Clip:
    """The line's clip as played on the dashboard, located but not read (oncore.http.clip_response streams it):
    both channels, with the margin on each side. Refuses with LineNotRecorded, LineHasNoTiming or
    RecordingUnavailable."""
    call = line.call
    if not (call.recorded and call.recording):
        raise errors.LineNotRecorded(f"Call {call.pk} was not recorded, so its lines have no audio.")
    if not line.has_timing:
        raise errors.LineHasNoTiming("This line has no audio timing, so its audio cannot be cut.")
    try:
        return audio.locate_clip(
            audio.stored(call.recording), line.start_s, line.end_s, label=f"call {call.pk}"
        )
    except audio.AudioError as exc:
        raise errors.RecordingUnavailable(str(exc)) from None


@dataclass(frozen=True)
class CallScreen:
    """A page of a call's lines as the call page shows them: each line's row and the call's live transcriber; and
    what the screen has read already of its flags' boxes: the results per candidate and the history of a flag just
    made (the page reads the rest when it renders them, or keeps them: views/calls.py flag_boxes)."""

    call: Call
    page: object  # a Paginator page of the call's lines
    rows: list  # LineRow
    live: object  # the live transcriber, or None
    results: dict = field(default_factory=dict)  # flag id -> flags.FlagResults
    histories: dict = field(default_factory=dict)  # flag id -> people.History: who made it, who edited it


def call_screen(call: Call, number=None, line_id: int | None = None) -> CallScreen:
    """Page `number` of the call's lines (or the page holding `line_id`)."""
    page = call_lines_page(call, number, line_id)
    return CallScreen(call, page, line_rows(call, list(page.object_list)), live_transcriber_of(call))


def new_flag_screen(line: Line, flag: Flag) -> CallScreen:
    """The line a request has just flagged, as the call page shows it, from what the request holds: the line with
    its call (lookups.line) and the flag it wrote, with its bank and maker as given."""
    line.flag = flag
    rows = line_rows(line.call, [line])
    results = flag_results([flag])
    return CallScreen(
        line.call, None, rows, live_transcriber_of(line.call), results, {flag.pk: new_history(flag)}
    )


def line_screen(line: Line) -> CallScreen:
    """One line of its call, as the call page shows it (after a flag change, or with a form open)."""
    line = Line.objects.select_related(
        "call__tenant__organization", "call__assistant", "call__live_transcriber", "flag__bank", "flag__box"
    ).get(pk=line.pk)
    return CallScreen(line.call, None, line_rows(line.call, [line]), live_transcriber_of(line.call))
