"""The call-import format (docs/call-import-format.md), `oncore-calls/1`: its one validator (`validate`, the
pydantic models `CallsFileIn` and the rest) and the reading of the file (`parse_json`, `check_file_size`). The
importer (oncore.calls.importer) writes what passes; the API and `manage.py import_calls` reach both through it.

Every string of the file is checked here, before anything is written, so a file the database could not store is
refused the same way on every database: no NUL character (PostgreSQL cannot store one), no value longer than its
column (PostgreSQL refuses it, SQLite would keep it whole; the limits are the models' own max_length), slugs by
Django's slug rule, names without invisible or direction-changing characters (oncore.names), moments that can be
read back and shown in any timezone, and no more lines than an import may have (ONCORE_MAX_LINES_PER_IMPORT).
Each message names the place and starts with the field's name."""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NotRequired

from django.core.validators import slug_re
from django.utils.dateparse import parse_datetime
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
)
from pydantic import ValidationError as PydanticValidationError
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12 on

from oncore import names
from oncore.accounts.models import Tenant
from oncore.config import config
from oncore.errors import MAX_ID
from oncore.transcribers.models import Transcriber

from .models import Assistant, Call

FORMAT = "oncore-calls/1"


class ImportFormatError(ValueError):
    """The file breaks the format; the message names the call and field and says what to fix. `errors`: every
    problem the validator found, as [{"loc": [...], "msg": ...}] (the first is in the message)."""

    def __init__(self, message: str, errors: list | None = None):
        super().__init__(message)
        self.errors = errors or []


class RecordingMissing(ImportFormatError):
    """A call names a recording that is not beside the calls file (not uploaded with it)."""

    def __init__(self, message: str, missing: str):
        super().__init__(message)
        self.missing = missing


def plain_file_name(name) -> bool:
    """A recording's name is a file's name, never a path: nothing outside the import's folder can be named."""
    name = str(name or "")
    return bool(name) and name not in (".", "..") and Path(name).name == name and "\\" not in name


# ---------------------------------------------------------------- the fields


def _no_nul(value: str, info: ValidationInfo) -> str:
    if "\x00" in value:
        raise ValueError(
            f"{info.field_name} must not contain the NUL character (no database column stores it)"
        )
    return value


def _column(model, field: str) -> AfterValidator:
    """At most as long as the model's column."""
    limit = model._meta.get_field(field).max_length

    def check(value: str, info: ValidationInfo) -> str:
        if len(value) > limit:
            raise ValueError(
                f"{info.field_name} is {len(value):,} characters long; at most {limit} are accepted "
                f"(the length of {model.__name__}.{field})"
            )
        return value

    return AfterValidator(check)


def _slug(value: str, info: ValidationInfo) -> str:
    if not slug_re.match(value):
        raise ValueError(
            f"{info.field_name} {shown(value)} must be a slug: letters, digits, hyphens and underscores only"
        )
    return value


def _name(value: str, info: ValidationInfo) -> str:
    problem = names.name_problem(value)
    if problem:
        raise ValueError(f"{info.field_name} {problem}")
    return value


# The moments a call, a recording setting or the reference date may name: what Python (so Django) reads back from
# either database, a day inside each end so the moment can be shown in any timezone and a day added to it.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, 23, 59, 59, tzinfo=UTC)


def parse_moment(value, field: str) -> datetime:
    """An ISO 8601 moment with its time zone, within EARLIEST..LATEST; ValueError naming the field otherwise."""
    try:
        parsed = parse_datetime(str(value))
    except ValueError:  # well formed but not a date ("2026-02-30T10:00:00+00:00")
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ValueError(f"{field} {shown(value)} must be ISO 8601 with a time zone")
    try:
        fits = EARLIEST <= parsed.astimezone(UTC) <= LATEST
    except OverflowError:  # past year 9999 or before year 1 in UTC
        fits = False
    if not fits:
        raise ValueError(
            f"{field} {shown(value)} must be between {EARLIEST.date()} and {LATEST.date()} (UTC), the dates "
            "every database and page can hold"
        )
    return parsed


def _moment(value: str, info: ValidationInfo) -> str:
    parse_moment(value, info.field_name)
    return value


def _str_ref(value):
    """A transcriber named by its slug alone ("deepgram-nova-3") is {"slug": ...}."""
    return {"slug": value} if isinstance(value, str) else value


def _int_to_str(value):
    """An external_id given as a number is its digits."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Text = Annotated[str, AfterValidator(_no_nul)]
Slug = Annotated[Text, _column(Tenant, "slug"), AfterValidator(_slug)]
Moment = Annotated[Text, AfterValidator(_moment)]
TenantName = Annotated[Text, _column(Tenant, "name"), AfterValidator(_name)]
AssistantName = Annotated[Text, _column(Assistant, "name"), AfterValidator(_name)]
LiveName = Annotated[Text, _column(Call, "live_transcriber_name"), AfterValidator(_name)]
ExternalId = Annotated[Text, _column(Call, "external_id"), BeforeValidator(_int_to_str)]
RecordingName = Annotated[Text, _column(Call, "recording")]


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")  # files may carry more (the demo's lines carry what was `said`)


class TranscriberRefIn(TypedDict):
    """A transcriber: {"slug": ...} or {"id": ...} from the catalogue, or {"name": ...} for an older call's."""

    slug: NotRequired[Annotated[Text, _column(Transcriber, "slug")] | None]
    id: NotRequired[Annotated[int, Field(ge=1, le=MAX_ID)] | None]
    name: NotRequired[LiveName | None]


TranscriberRef = Annotated[TranscriberRefIn, BeforeValidator(_str_ref)]


class LineIn(TypedDict):
    """A line, kept as a dict (a model per line would cost more memory than the line): its fields are checked,
    anything else it carries (the demo's `said`) is left out."""

    speaker: Text
    text: NotRequired[Text]
    # Checked together by _timing, which says what a line's timing must be (finite numbers, in order, within the
    # recording) better than a type error on one of them could.
    start_s: NotRequired[Any]
    end_s: NotRequired[Any]


def _plain(value: str, info: ValidationInfo) -> str:
    if value and not plain_file_name(value):
        raise ValueError(f"{info.field_name} {shown(value)} must be a plain file name")
    return value


class CallIn(TypedDict):
    """A call, kept as a dict too (an import may have tens of thousands): absent fields are absent, so read them
    with .get(); anything else it carries is left out."""

    external_id: NotRequired[ExternalId | None]
    tenant: Slug
    assistant: NotRequired[AssistantName | None]
    started_at: Moment
    recording: NotRequired[Annotated[RecordingName, AfterValidator(_plain)] | None]
    recorded: NotRequired[bool | None]
    live_transcriber: NotRequired[TranscriberRef | None]
    lines: list[LineIn]


class AssistantIn(_Loose):
    tenant: Slug
    name: AssistantName
    instructions: Text = ""
    transcriber: TranscriberRef | None = None
    # The recording setting (ISO 8601 with a time zone; their order checked by _recording_setting): from when the
    # assistant records calls (null: none) and until when (null: it still records).
    records_from: Moment | None = None
    records_until: Moment | None = None


class TenantIn(_Loose):
    slug: Slug
    name: TenantName | None = None


class CallsFileIn(_Loose):
    format: str
    reference_date: Moment | None = None
    tenants: list[TenantIn] = []
    assistants: list[AssistantIn] = []
    calls: list[CallIn]


def shown(value, limit: int = 40) -> str:
    """A value of the file as a message quotes it: at most `limit` characters, control characters escaped."""
    text = str(value)
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def label(value, limit: int = 40) -> str:
    """A call's id as messages name it: as written when it is short and plain, else quoted and cut."""
    text = str(value)
    return text if len(text) <= limit and text.isprintable() else shown(text, limit)


def _named(key: str, node) -> str:
    node = node if isinstance(node, dict) else {}
    if key == "tenants":
        return f"tenant {shown(node.get('slug'))}"
    return f"assistant {shown(node.get('name'))}"


def _where(loc, data) -> str:
    """A validator's location as the importer's messages name places: "call bistro-001, line 3, end_s"."""
    parts, node, i = [], data, 0
    while i < len(loc):
        key = loc[i]
        items = node.get(key) if isinstance(node, dict) else None
        if (
            key in ("calls", "lines", "tenants", "assistants")
            and i + 1 < len(loc)
            and isinstance(items, list)
        ):
            index = loc[i + 1]
            node = items[index] if isinstance(index, int) and 0 <= index < len(items) else {}
            if key == "calls":
                call_id = node.get("external_id") if isinstance(node, dict) else None
                parts.append(f"call {label(call_id or index + 1)}")
            elif key == "lines":
                parts.append(f"line {index + 1}")
            else:
                parts.append(_named(key, node))
            i += 2
        else:
            parts.append(str(key))
            node = items
            i += 1
    return ", ".join(parts)


def _problem(error: dict) -> tuple[list, str]:
    """(where, what is wrong) of one validator error. A message of this module's own validators starts with the
    field's name, so the place stops before it."""
    loc, msg = list(error["loc"]), error["msg"]
    if error["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
        if loc and isinstance(loc[-1], str) and msg.startswith(f"{loc[-1]} "):
            loc = loc[:-1]
    return loc, msg


# Problems listed in an ImportFormatError's `errors` (a file of bad lines has as many as it has lines).
MAX_ERRORS = 100


def count_lines(data) -> int:
    """The lines of a parsed calls file, as written (before validation)."""
    calls = data.get("calls") if isinstance(data, dict) else None
    if not isinstance(calls, list):
        return 0
    return sum(len(c["lines"]) for c in calls if isinstance(c, dict) and isinstance(c.get("lines"), list))


def check_lines(n_lines: int, name: str) -> None:
    limit = config().max_lines_per_import
    if n_lines > limit:
        raise ImportFormatError(
            f"{name}: {n_lines:,} lines; an import may have at most {limit:,} lines (ONCORE_MAX_LINES_PER_IMPORT). "
            "Split it into several files."
        )


def validate(data, name: str) -> CallsFileIn:
    """The calls file's content against the format: a CallsFileIn, or an ImportFormatError naming the file and
    the first place that breaks it (the first MAX_ERRORS problems in `errors`, as pydantic words them)."""
    if not isinstance(data, dict):
        raise ImportFormatError(f"{name}: the file must hold one JSON object with 'format' and 'calls'.")
    if data.get("format") != FORMAT:
        raise ImportFormatError(f"{name}: 'format' must be {FORMAT!r}.")
    check_lines(count_lines(data), name)
    try:
        return CallsFileIn.model_validate(data)
    except PydanticValidationError as exc:
        found = exc.errors(include_url=False, include_input=False)[:MAX_ERRORS]
        errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in found]
        loc, msg = _problem(found[0])
        where = _where(loc, data)
        raise ImportFormatError(f"{name}: {where + ': ' if where else ''}{msg}.", errors) from None


def _not_json(constant):
    raise ValueError(f"{constant} is not a number JSON allows; give a finite number or null")


# A file is read only as far as an import may go: past the lines allowed, or past this many JSON objects per line
# allowed (each line is one; a call, its transcriber and the file's tenants and assistants are the rest), it is
# refused while it is read, so a file too large to import costs no more memory than the largest import allowed.
OBJECTS_PER_LINE = 4


class _TooLarge(Exception):
    """Raised from inside the JSON reader to stop it (not a ValueError: the reader would report that as bad
    JSON)."""


def parse_json(text: str, name: str):
    """The calls file's JSON: refuses NaN and ±Infinity (not JSON, though Python reads them), nesting too deep to
    read, and more lines than an import may have (ONCORE_MAX_LINES_PER_IMPORT, counted as it is read), with an
    ImportFormatError naming the file."""
    limit = config().max_lines_per_import
    max_objects = OBJECTS_PER_LINE * limit + 1_000
    seen = {"objects": 0, "lines": 0}

    def count(obj: dict) -> dict:
        seen["objects"] += 1
        seen["lines"] += "speaker" in obj
        if seen["lines"] > limit or seen["objects"] > max_objects:
            raise _TooLarge
        return obj

    try:
        return json.loads(text, parse_constant=_not_json, object_hook=count)
    except _TooLarge:
        what = f"{limit:,} lines" if seen["lines"] > limit else f"{max_objects:,} JSON objects"
        raise ImportFormatError(
            f"{name}: more than {what}; an import may have at most {limit:,} lines "
            "(ONCORE_MAX_LINES_PER_IMPORT). Split it into several files."
        ) from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise ImportFormatError(f"{name}: not valid JSON ({exc}).") from None
    except RecursionError:
        raise ImportFormatError(f"{name}: the JSON is nested too deeply to be a calls file.") from None


def check_file_size(size: int, name: str) -> None:
    limit_mb = config().max_import_file_mb
    if size > limit_mb * 2**20:
        raise ImportFormatError(
            f"{name} is {size / 2**20:.1f} MB; a calls file may be at most {limit_mb} MB "
            "(ONCORE_MAX_IMPORT_FILE_MB). Split it into several files."
        )
