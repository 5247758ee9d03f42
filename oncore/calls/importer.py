"""Import calls in the documented JSON format (docs/call-import-format.md)."""

import json
import math
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.db import transaction
from django.utils.dateparse import parse_datetime

from oncore import audio
from oncore.accounts.models import Tenant
from oncore.transcribers.models import Transcriber

from .models import Assistant, Call, Line

FORMAT = "oncore-calls/1"


class ImportFormatError(ValueError):
    """The file breaks the format; the message names the call and field and says what to fix."""


def _require(obj: dict, key: str, where: str):
    if key not in obj or obj[key] in (None, ""):
        raise ImportFormatError(f"{where}: '{key}' is missing.")
    return obj[key]


def _transcriber(ref, where):
    """(catalogue entry or None, name for older calls)."""
    if ref is None:
        return None, ""
    if isinstance(ref, str):
        ref = {"slug": ref}
    if "slug" in ref or "id" in ref:
        lookup = {"slug": ref["slug"]} if "slug" in ref else {"pk": ref["id"]}
        found = Transcriber.objects.filter(**lookup).first()
        if found is None:
            raise ImportFormatError(
                f"{where}: no catalogue transcriber {lookup}; see the catalogue for valid ids."
            )
        return found, ""
    if "name" in ref:
        return None, str(ref["name"])
    raise ImportFormatError(f"{where}: a transcriber is {{'slug': ...}}, {{'id': ...}} or {{'name': ...}}.")


def _parse_time(value, where) -> datetime:
    parsed = parse_datetime(str(value))
    if parsed is None or parsed.tzinfo is None:
        raise ImportFormatError(f"{where}: started_at {value!r} must be ISO 8601 with a time zone.")
    return parsed


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
    limit_mb = settings.ONCORE["MAX_IMPORT_FILE_MB"]
    if size > limit_mb * 2**20:
        raise ImportFormatError(
            f"{name} is {size / 2**20:.1f} MB; a calls file may be at most {limit_mb} MB "
            "(ONCORE_MAX_IMPORT_FILE_MB). Split it into several files."
        )


def _duration(seconds: float) -> str:
    return f"{seconds:,.1f} s" + (f" ({seconds / 3600:.2f} h)" if seconds >= 3600 else "")


def _check_recording(info: audio.RecordingInfo, where: str) -> None:
    """The limits a recording must keep to (ONCORE_MAX_RECORDING_S, ONCORE_MAX_SAMPLE_RATE)."""
    max_s, max_rate = settings.ONCORE["MAX_RECORDING_S"], settings.ONCORE["MAX_SAMPLE_RATE"]
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


def _timing(ln: dict, lwhere: str, duration_s: float | None):
    """(start_s, end_s) of a line, both None when its timing is unknown. Both must be finite numbers with
    0 <= start_s < end_s, and end_s at most the recording's duration (or the longest recording accepted)."""
    start, end = ln.get("start_s"), ln.get("end_s")
    if start is None and end is None:
        return None, None
    limit = duration_s if duration_s is not None else settings.ONCORE["MAX_RECORDING_S"]
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


def import_calls(path, organization, *, shift_to=None) -> dict:
    """Load a calls file into an organization. Calls already imported (same tenant and external_id) are
    skipped, so importing twice changes nothing. `shift_to` moves every date so the file's reference_date
    lands on that time (demo data stays recent). Returns counts. Refuses, naming the call and line, what breaks
    the format or the limits (ONCORE_MAX_IMPORT_FILE_MB, _MAX_RECORDING_S, _MAX_SAMPLE_RATE, _MAX_LINES_PER_CALL,
    line timing within the recording); nothing of a refused file is imported."""
    path = Path(path)
    try:
        check_file_size(path.stat().st_size, path.name)
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFormatError(f"{path.name}: cannot read it ({exc}).") from None
    data = parse_json(text, path.name)
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path.name}: the file must hold one JSON object with 'format' and 'calls'.")
    if data.get("format") != FORMAT:
        raise ImportFormatError(f"{path.name}: 'format' must be {FORMAT!r}.")
    shift = timedelta(0)
    if shift_to is not None and data.get("reference_date"):
        shift = shift_to - _parse_time(data["reference_date"], "reference_date")

    counts = {"tenants": 0, "assistants": 0, "calls": 0, "lines": 0, "skipped": 0}
    with transaction.atomic():
        tenants = {t.slug: t for t in organization.tenants.all()}
        for spec in data.get("tenants", []):
            slug = _require(spec, "slug", "tenant")
            if slug not in tenants:
                tenants[slug] = Tenant.objects.create(
                    organization=organization, slug=slug, name=spec.get("name", slug)
                )
                counts["tenants"] += 1
        assistants = {}
        for spec in data.get("assistants", []):
            where = f"assistant {spec.get('name')!r}"
            tenant = tenants.get(_require(spec, "tenant", where))
            if tenant is None:
                raise ImportFormatError(f"{where}: tenant {spec['tenant']!r} is not listed under 'tenants'.")
            transcriber, _ = _transcriber(spec.get("transcriber"), where)
            assistant, created = Assistant.objects.get_or_create(
                tenant=tenant,
                name=_require(spec, "name", where),
                defaults={"instructions": spec.get("instructions", ""), "transcriber": transcriber},
            )
            assistants[(tenant.slug, assistant.name)] = assistant
            counts["assistants"] += created

        for i, spec in enumerate(_require(data, "calls", path.name)):
            where = f"call {spec.get('external_id') or i + 1}"
            tenant = (
                tenants.get(_require(spec, "tenant", where))
                or organization.tenants.filter(slug=spec["tenant"]).first()
            )
            if tenant is None:
                raise ImportFormatError(f"{where}: tenant {spec['tenant']!r} is not in this organization.")
            external_id = str(spec.get("external_id") or "")
            if external_id and Call.objects.filter(tenant=tenant, external_id=external_id).exists():
                counts["skipped"] += 1
                continue
            assistant = None
            if spec.get("assistant"):
                assistant = (
                    assistants.get((tenant.slug, spec["assistant"]))
                    or Assistant.objects.filter(tenant=tenant, name=spec["assistant"]).first()
                )
                if assistant is None:
                    raise ImportFormatError(f"{where}: assistant {spec['assistant']!r} is not listed.")
            live, live_name = _transcriber(spec.get("live_transcriber"), where)
            call = Call(
                tenant=tenant,
                assistant=assistant,
                external_id=external_id,
                started_at=_parse_time(_require(spec, "started_at", where), where) + shift,
                recorded=bool(spec.get("recorded", bool(spec.get("recording")))),
                live_transcriber=live,
                live_transcriber_name=live_name,
            )
            recording = spec.get("recording")
            duration_s = None
            if recording:
                file_path = (path.parent / recording).resolve()
                if not file_path.is_file():
                    raise ImportFormatError(
                        f"{where}: recording {recording!r} not found next to {path.name}."
                    )
                info = audio.probe(file_path, label=where)  # refuses files that are not audio, clearly
                _check_recording(info, where)
                duration_s = info.duration_s
            specs = _require(spec, "lines", where)
            max_lines = settings.ONCORE["MAX_LINES_PER_CALL"]
            if len(specs) > max_lines:
                raise ImportFormatError(
                    f"{where}: {len(specs)} lines; a call may have at most {max_lines} "
                    "(ONCORE_MAX_LINES_PER_CALL)."
                )
            lines = []
            for position, ln in enumerate(specs):
                lwhere = f"{where}, line {position + 1}"
                speaker = _require(ln, "speaker", lwhere)
                if speaker not in (Line.CALLER, Line.ASSISTANT):
                    raise ImportFormatError(
                        f"{lwhere}: speaker must be 'caller' or 'assistant', not {speaker!r}."
                    )
                start, end = _timing(ln, lwhere, duration_s)
                lines.append(
                    Line(
                        call=call,
                        position=position,
                        speaker=speaker,
                        text=ln.get("text", ""),
                        start_s=start,
                        end_s=end,
                    )
                )
            if recording:
                with file_path.open("rb") as fh:
                    call.recording.save(file_path.name, File(fh), save=False)
            call.n_lines = len(lines)
            call.save()
            Line.objects.bulk_create(lines)
            counts["calls"] += 1
            counts["lines"] += len(lines)
    return counts
