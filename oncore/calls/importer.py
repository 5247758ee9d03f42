"""Import calls in the documented JSON format (docs/call-import-format.md): the one validator of the format
(`CallsFileIn`, read by `validate`) and the one importer (`do_import_calls`), which `manage.py import_calls`,
the API's POST /calls/import and the demo loader all call."""

import json
import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.core.files import File
from django.db import transaction
from django.utils.dateparse import parse_datetime
from pydantic import BaseModel, ConfigDict, field_validator
from pydantic import ValidationError as PydanticValidationError

from oncore import audio
from oncore.accounts.models import Tenant
from oncore.config import config
from oncore.transcribers.models import Transcriber

from .models import Assistant, Call, Line

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


# ---------------------------------------------------------------- the format


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")  # files may carry more (the demo's lines carry what was `said`)


class TranscriberRefIn(_Loose):
    slug: str | None = None
    id: int | None = None
    name: str | None = None


class LineIn(_Loose):
    speaker: str
    text: str = ""
    # Checked together by _timing, which says what a line's timing must be (finite numbers, in order, within the
    # recording) better than a type error on one of them could.
    start_s: Any = None
    end_s: Any = None


class CallIn(_Loose):
    external_id: str | int | None = None
    tenant: str
    assistant: str | None = None
    started_at: str
    recording: str | None = None
    recorded: bool | None = None
    live_transcriber: str | TranscriberRefIn | None = None
    lines: list[LineIn]

    @field_validator("recording")
    @classmethod
    def _plain(cls, value):
        if value and not plain_file_name(value):
            raise ValueError(f"recording {value!r} must be a plain file name")
        return value


class AssistantIn(_Loose):
    tenant: str
    name: str
    instructions: str = ""
    transcriber: str | TranscriberRefIn | None = None
    # The recording setting (ISO 8601 with a time zone; both checked by _recording_setting): from when the
    # assistant records calls (null: none) and until when (null: it still records).
    records_from: str | None = None
    records_until: str | None = None


class TenantIn(_Loose):
    slug: str
    name: str | None = None


class CallsFileIn(_Loose):
    format: str
    reference_date: str | None = None
    tenants: list[TenantIn] = []
    assistants: list[AssistantIn] = []
    calls: list[CallIn]


def _where(loc, data) -> str:
    """A validator's location as the importer's messages name places: "call bistro-001, line 3, end_s"."""
    parts, node, i = [], data, 0
    while i < len(loc):
        key = loc[i]
        items = node.get(key) if isinstance(node, dict) else None
        if key in ("calls", "lines") and i + 1 < len(loc) and isinstance(items, list):
            index = loc[i + 1]
            node = items[index] if isinstance(index, int) and 0 <= index < len(items) else {}
            if key == "calls":
                parts.append(
                    f"call {(node.get('external_id') if isinstance(node, dict) else None) or index + 1}"
                )
            else:
                parts.append(f"line {index + 1}")
            i += 2
        else:
            parts.append(str(key))
            node = items
            i += 1
    return ", ".join(parts) or "the file"


def validate(data, name: str) -> CallsFileIn:
    """The calls file's content against the format: a CallsFileIn, or an ImportFormatError naming the file and
    the first place that breaks it (every problem in `errors`)."""
    if not isinstance(data, dict):
        raise ImportFormatError(f"{name}: the file must hold one JSON object with 'format' and 'calls'.")
    if data.get("format") != FORMAT:
        raise ImportFormatError(f"{name}: 'format' must be {FORMAT!r}.")
    try:
        return CallsFileIn.model_validate(data)
    except PydanticValidationError as exc:
        errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors(include_url=False)]
        first = errors[0]
        raise ImportFormatError(f"{name}: {_where(first['loc'], data)}: {first['msg']}.", errors) from None


def _transcriber(ref, where):
    """(catalogue entry or None, name for older calls)."""
    if ref is None:
        return None, ""
    if isinstance(ref, str):
        ref = TranscriberRefIn(slug=ref)
    if ref.slug is not None or ref.id is not None:
        lookup = {"slug": ref.slug} if ref.slug is not None else {"pk": ref.id}
        found = Transcriber.objects.filter(**lookup).first()
        if found is None:
            raise ImportFormatError(
                f"{where}: no catalogue transcriber {lookup}; see the catalogue for valid ids."
            )
        return found, ""
    if ref.name is not None:
        return None, ref.name
    raise ImportFormatError(f"{where}: a transcriber is {{'slug': ...}}, {{'id': ...}} or {{'name': ...}}.")


def _parse_time(value, where, field: str = "started_at") -> datetime:
    try:
        parsed = parse_datetime(str(value))
    except ValueError:  # well formed but not a date ("2026-02-30T10:00:00+00:00")
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ImportFormatError(f"{where}: {field} {value!r} must be ISO 8601 with a time zone.")
    return parsed


def _recording_setting(spec: AssistantIn, where: str, shift: timedelta) -> dict | None:
    """The assistant's recording setting as the file states it ({"records_from", "records_until"}), or None when
    the file says nothing of it (an assistant that exists keeps its own; a new one records no calls)."""
    if not {"records_from", "records_until"} & spec.model_fields_set:
        return None
    start, until = (
        None if value is None else _parse_time(value, where, field) + shift
        for value, field in ((spec.records_from, "records_from"), (spec.records_until, "records_until"))
    )
    if until is not None and start is None:
        raise ImportFormatError(
            f"{where}: records_until needs records_from (when recording was turned on before it was turned off)."
        )
    if until is not None and until <= start:
        raise ImportFormatError(
            f"{where}: records_until {spec.records_until!r} must be after records_from {spec.records_from!r}."
        )
    return {"records_from": start, "records_until": until}


def _not_json(constant):
    raise ValueError(f"{constant} is not a number JSON allows; give a finite number or null")


def parse_json(text: str, name: str):
    """The calls file's JSON: refuses NaN and ±Infinity (not JSON, though Python reads them) and nesting too
    deep to read, with an ImportFormatError naming the file."""
    try:
        return json.loads(text, parse_constant=_not_json)
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


def _duration(seconds: float) -> str:
    return f"{seconds:,.1f} s" + (f" ({seconds / 3600:.2f} h)" if seconds >= 3600 else "")


def _check_recording(info: audio.RecordingInfo, where: str) -> None:
    """The limits a recording must keep to (ONCORE_MAX_RECORDING_S, ONCORE_MAX_SAMPLE_RATE)."""
    max_s, max_rate = config().max_recording_s, config().max_sample_rate
    if info.duration_s > max_s:
        raise ImportFormatError(
            f"{where}: the recording is {_duration(info.duration_s)} long; at most {_duration(max_s)} is "
            "accepted (ONCORE_MAX_RECORDING_S). Split the call or leave its recording out."
        )
    if info.sample_rate > max_rate:
        raise ImportFormatError(
            f"{where}: the recording is sampled at {info.sample_rate} Hz; at most {max_rate} Hz is accepted "
            "(ONCORE_MAX_SAMPLE_RATE). Resample it (telephone audio needs no more than 16 kHz)."
        )


def _timing(ln: LineIn, lwhere: str, duration_s: float | None):
    """(start_s, end_s) of a line, both None when its timing is unknown. Both must be finite numbers with
    0 <= start_s < end_s, and end_s at most the recording's duration (or the longest recording accepted)."""
    start, end = ln.start_s, ln.end_s
    if start is None and end is None:
        return None, None
    limit = duration_s if duration_s is not None else config().max_recording_s
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (start, end))
    if not numbers or not all(math.isfinite(v) for v in (start, end)):
        raise ImportFormatError(
            f"{lwhere}: start_s and end_s must both be numbers of seconds (or both null), "
            f"not {start!r} and {end!r}."
        )
    if not 0 <= start < end <= limit:
        within = "the recording, which is" if duration_s is not None else "the longest recording accepted,"
        raise ImportFormatError(
            f"{lwhere}: the timing {start}–{end} s must have 0 ≤ start_s < end_s ≤ {limit:.3f} s "
            f"(the end of {within} {limit:.3f} s long)."
        )
    return float(start), float(end)


def _recorded(spec: CallIn, assistant, started_at) -> bool:
    """What a call's `recorded` says; without it, whether it was: it carries its recording, or its assistant was
    recording calls when it started."""
    if spec.recorded is not None:
        return spec.recorded
    return bool(spec.recording) or (assistant is not None and assistant.records_at(started_at))


def do_import_calls(path, organization, *, shift_to=None, name: str | None = None) -> dict:
    """Load a calls file into an organization, its recordings read from the file's folder. Calls already imported
    (same tenant and external_id) are skipped, so importing twice changes nothing. `shift_to` moves every date so
    the file's reference_date lands on that time (demo data stays recent); `name` is how messages name the file
    (the name it was uploaded with). Returns counts. Refuses, naming the call and line, what breaks the format
    (`validate`) or the limits (ONCORE_MAX_IMPORT_FILE_MB, _MAX_RECORDING_S, _MAX_SAMPLE_RATE,
    _MAX_LINES_PER_CALL, line timing within the recording); nothing of a refused file is imported."""
    path = Path(path)
    name = name or path.name
    try:
        check_file_size(path.stat().st_size, name)
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFormatError(f"{name}: cannot read it ({exc}).") from None
    data = validate(parse_json(text, name), name)
    shift = timedelta(0)
    if shift_to is not None and data.reference_date:
        shift = shift_to - _parse_time(data.reference_date, name, "reference_date")

    counts = {"tenants": 0, "assistants": 0, "calls": 0, "lines": 0, "skipped": 0}
    with transaction.atomic():
        tenants = {t.slug: t for t in organization.tenants.all()}
        for spec in data.tenants:
            if spec.slug not in tenants:
                tenants[spec.slug] = Tenant.objects.create(
                    organization=organization, slug=spec.slug, name=spec.name or spec.slug
                )
                counts["tenants"] += 1
        assistants = {}
        for spec in data.assistants:
            where = f"assistant {spec.name!r}"
            tenant = tenants.get(spec.tenant)
            if tenant is None:
                raise ImportFormatError(f"{where}: tenant {spec.tenant!r} is not listed under 'tenants'.")
            transcriber, _ = _transcriber(spec.transcriber, where)
            setting = _recording_setting(spec, where, shift)
            assistant, created = Assistant.objects.get_or_create(
                tenant=tenant,
                name=spec.name,
                defaults={"instructions": spec.instructions, "transcriber": transcriber, **(setting or {})},
            )
            if not created and setting is not None:
                # The file is the newer word on the setting (the assistant's other fields are kept as they are).
                for field, value in setting.items():
                    setattr(assistant, field, value)
                assistant.save(update_fields=list(setting))
            assistants[(tenant.slug, assistant.name)] = assistant
            counts["assistants"] += created

        for i, spec in enumerate(data.calls):
            where = f"call {spec.external_id or i + 1}"
            tenant = tenants.get(spec.tenant) or organization.tenants.filter(slug=spec.tenant).first()
            if tenant is None:
                raise ImportFormatError(f"{where}: tenant {spec.tenant!r} is not in this organization.")
            external_id = str(spec.external_id or "")
            if external_id and Call.objects.filter(tenant=tenant, external_id=external_id).exists():
                counts["skipped"] += 1
                continue
            assistant = None
            if spec.assistant:
                assistant = (
                    assistants.get((tenant.slug, spec.assistant))
                    or Assistant.objects.filter(tenant=tenant, name=spec.assistant).first()
                )
                if assistant is None:
                    raise ImportFormatError(f"{where}: assistant {spec.assistant!r} is not listed.")
            live, live_name = _transcriber(spec.live_transcriber, where)
            started_at = _parse_time(spec.started_at, where) + shift
            call = Call(
                tenant=tenant,
                assistant=assistant,
                external_id=external_id,
                started_at=started_at,
                recorded=_recorded(spec, assistant, started_at),
                live_transcriber=live,
                live_transcriber_name=live_name,
            )
            duration_s = None
            if spec.recording:
                file_path = path.parent / spec.recording
                if not file_path.is_file():
                    raise RecordingMissing(
                        f"{where}: recording {spec.recording!r} was not found beside {name} (upload it with the "
                        "calls file).",
                        spec.recording,
                    )
                info = audio.probe(file_path, label=where)  # refuses files that are not audio, clearly
                _check_recording(info, where)
                duration_s = info.duration_s
            max_lines = config().max_lines_per_call
            if len(spec.lines) > max_lines:
                raise ImportFormatError(
                    f"{where}: {len(spec.lines)} lines; a call may have at most {max_lines} "
                    "(ONCORE_MAX_LINES_PER_CALL)."
                )
            lines = []
            for position, ln in enumerate(spec.lines):
                lwhere = f"{where}, line {position + 1}"
                if ln.speaker not in (Line.CALLER, Line.ASSISTANT):
                    raise ImportFormatError(
                        f"{lwhere}: speaker must be 'caller' or 'assistant', not {ln.speaker!r}."
                    )
                start, end = _timing(ln, lwhere, duration_s)
                lines.append(
                    Line(
                        call=call,
                        position=position,
                        speaker=ln.speaker,
                        text=ln.text,
                        start_s=start,
                        end_s=end,
                    )
                )
            if spec.recording:
                with file_path.open("rb") as fh:
                    call.recording.save(file_path.name, File(fh), save=False)
            call.n_lines = len(lines)
            call.save()
            Line.objects.bulk_create(lines)
            counts["calls"] += 1
            counts["lines"] += len(lines)
    return counts
