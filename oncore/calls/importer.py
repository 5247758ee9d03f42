"""Import calls in the documented JSON format (docs/call-import-format.md)."""

import json
from datetime import datetime, timedelta
from pathlib import Path

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


def import_calls(path, organization, *, shift_to=None) -> dict:
    """Load a calls file into an organization. Calls already imported (same tenant and external_id) are
    skipped, so importing twice changes nothing. `shift_to` moves every date so the file's reference_date
    lands on that time (demo data stays recent). Returns counts."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ImportFormatError(f"{path.name}: cannot read JSON ({exc}).") from None
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
            if recording:
                file_path = (path.parent / recording).resolve()
                if not file_path.is_file():
                    raise ImportFormatError(
                        f"{where}: recording {recording!r} not found next to {path.name}."
                    )
                audio.probe(file_path, label=where)  # refuses files that are not audio, with a clear message
                with file_path.open("rb") as fh:
                    call.recording.save(file_path.name, File(fh), save=False)
            call.save()
            lines = []
            for position, ln in enumerate(_require(spec, "lines", where)):
                lwhere = f"{where}, line {position + 1}"
                speaker = _require(ln, "speaker", lwhere)
                if speaker not in (Line.CALLER, Line.ASSISTANT):
                    raise ImportFormatError(
                        f"{lwhere}: speaker must be 'caller' or 'assistant', not {speaker!r}."
                    )
                start, end = ln.get("start_s"), ln.get("end_s")
                if (start is None) != (end is None) or (start is not None and float(end) <= float(start)):
                    raise ImportFormatError(
                        f"{lwhere}: give both start_s and end_s, with end_s after start_s."
                    )
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
            Line.objects.bulk_create(lines)
            counts["calls"] += 1
            counts["lines"] += len(lines)
    return counts
