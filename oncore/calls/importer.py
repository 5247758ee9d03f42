"""Import calls in the documented JSON format (docs/call-import-format.md): the one importer (`do_import_calls`),
which `manage.py import_calls`, the API's POST /calls/import and the demo loader all call. The format's one
validator is oncore.calls.format (`validate`), named here too for those callers."""

import dataclasses
import math
from datetime import datetime, timedelta
from pathlib import Path

from django.core.files import File
from django.db import connection, transaction

from oncore import audio
from oncore.accounts.models import Tenant
from oncore.config import config
from oncore.transcribers.models import Transcriber

from .format import (
    EARLIEST,
    LATEST,
    AssistantIn,
    CallIn,
    ImportFormatError,
    LineIn,
    RecordingMissing,
    TranscriberRefIn,
    check_file_size,
    parse_json,
    parse_moment,
    plain_file_name,
    shown,
    validate,
)
from .format import label as _label
from .models import Assistant, Call, Line

__all__ = [
    "ImportFormatError",
    "RecordingMissing",
    "check_file_size",
    "do_import_calls",
    "parse_json",
    "plain_file_name",
    "validate",
]


def _transcriber(ref: TranscriberRefIn | None, where: str, found: dict):
    """(catalogue entry or None, name for older calls). `found` keeps what was looked up: one query per entry."""
    if ref is None:
        return None, ""
    slug, pk, name = ref.get("slug"), ref.get("id"), ref.get("name")
    if slug is not None or pk is not None:
        key = ("slug", slug) if slug is not None else ("pk", pk)
        if key not in found:
            found[key] = Transcriber.objects.filter(**dict([key])).first()
        if found[key] is None:
            raise ImportFormatError(
                f"{where}: no catalogue transcriber {dict([key])}; see the catalogue for valid ids."
            )
        return found[key], ""
    if name is not None:
        return None, name
    raise ImportFormatError(f"{where}: a transcriber is {{'slug': ...}}, {{'id': ...}} or {{'name': ...}}.")


def _at(value: str, where: str, field: str, shift: timedelta) -> datetime:
    """A moment of the file (the validator checked it), moved by `shift`: still within the range once moved."""
    try:
        moved = parse_moment(value, field) + shift
    except OverflowError:
        moved = None
    if moved is None or not EARLIEST <= moved <= LATEST:
        raise ImportFormatError(
            f"{where}: {field} {shown(value)}, moved to the reference date given, would fall outside "
            f"{EARLIEST.date()}..{LATEST.date()}."
        )
    return moved


def _recording_setting(spec: AssistantIn, where: str, shift: timedelta) -> dict | None:
    """The assistant's recording setting as the file states it ({"records_from", "records_until"}), or None when
    the file says nothing of it (an assistant that exists keeps its own; a new one records no calls)."""
    if not {"records_from", "records_until"} & spec.model_fields_set:
        return None
    start, until = (
        None if value is None else _at(value, where, field, shift)
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


def _duration(seconds: float) -> str:
    return f"{seconds:,.1f} s" + (f" ({seconds / 3600:.2f} h)" if seconds >= 3600 else "")


def _check_recording(info: audio.RecordingInfo, where: str, file_name: str) -> None:
    """What a recording must be: WAV, FLAC or Ogg by its content, and within ONCORE_MAX_RECORDING_S and
    ONCORE_MAX_SAMPLE_RATE."""
    problem = audio.container_problem(info)
    if problem:
        raise ImportFormatError(
            f"{where}: recording {shown(file_name)} {problem}. Convert it (to FLAC, for one) and import it again."
        )
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
    start, end = ln.get("start_s"), ln.get("end_s")
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
    if spec.get("recorded") is not None:
        return spec["recorded"]
    return bool(spec.get("recording")) or (assistant is not None and assistant.records_at(started_at))


# Calls and lines are written in batches: the Line objects of at most BATCH_LINES lines (and at most BATCH_CALLS
# calls) are in memory at once, whatever the size of the import.
BATCH_LINES = 2_000
BATCH_CALLS = 500


class _Batches:
    """Calls waiting to be written with their lines: one insert of the calls, then of their lines, per batch."""

    def __init__(self):
        self.waiting: list[tuple[Call, list[Line]]] = []
        self.n_lines = 0

    def add(self, call: Call, lines: list[Line]) -> None:
        call.n_lines = len(lines)
        self.waiting.append((call, lines))
        self.n_lines += len(lines)
        if self.n_lines >= BATCH_LINES or len(self.waiting) >= BATCH_CALLS:
            self.write()

    def write(self) -> None:
        calls = [call for call, _ in self.waiting]
        if connection.features.can_return_rows_from_bulk_insert:
            Call.objects.bulk_create(calls)
        else:  # a database that cannot say the new ids of a bulk insert
            for call in calls:
                call.save()
        Line.objects.bulk_create([ln for _, lines in self.waiting for ln in lines], batch_size=BATCH_LINES)
        self.waiting, self.n_lines = [], 0


def _imported_before(organization, specs: list[CallIn]) -> set[tuple[int, str]]:
    """(tenant id, external_id) of the organization's calls that the file's calls may repeat."""
    ids = sorted({spec["external_id"] for spec in specs if spec.get("external_id")})
    found = set()
    for start in range(0, len(ids), 500):
        found.update(
            Call.objects.filter(tenant__organization=organization, external_id__in=ids[start : start + 500])
            .values_list("tenant_id", "external_id")
            .iterator()
        )
    return found


@dataclasses.dataclass
class _Import:
    """One file's import under way: where its recordings are, how far its dates move, and what it has found and
    counted so far (catalogue entries looked up once each, tenants and assistants by name)."""

    organization: object
    folder: Path
    name: str  # how messages name the file
    shift: timedelta
    counts: dict = dataclasses.field(
        default_factory=lambda: {"tenants": 0, "assistants": 0, "calls": 0, "lines": 0, "skipped": 0}
    )
    transcribers: dict = dataclasses.field(default_factory=dict)
    tenants: dict = dataclasses.field(default_factory=dict)
    assistants: dict = dataclasses.field(default_factory=dict)


def _read(path: Path, name: str):
    """The file, read and validated (the format's one validator)."""
    try:
        check_file_size(path.stat().st_size, name)
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFormatError(f"{name}: cannot read it ({exc}).") from None
    return validate(parse_json(text, name), name)


def _add_tenants(run: _Import, specs) -> None:
    run.tenants = {t.slug: t for t in run.organization.tenants.all()}
    for spec in specs:
        if spec.slug not in run.tenants:
            run.tenants[spec.slug] = Tenant.objects.create(
                organization=run.organization, slug=spec.slug, name=spec.name or spec.slug
            )
            run.counts["tenants"] += 1


def _add_assistants(run: _Import, specs: list[AssistantIn]) -> None:
    for spec in specs:
        where = f"assistant {shown(spec.name)}"
        tenant = run.tenants.get(spec.tenant)
        if tenant is None:
            raise ImportFormatError(f"{where}: tenant {spec.tenant!r} is not listed under 'tenants'.")
        transcriber, _ = _transcriber(spec.transcriber, where, run.transcribers)
        setting = _recording_setting(spec, where, run.shift)
        assistant, created = Assistant.objects.get_or_create(
            tenant=tenant,
            name=spec.name,
            defaults={"instructions": spec.instructions, "transcriber": transcriber, **(setting or {})},
        )
        if not created and setting is not None:
            # The file is the newer word on the setting (the assistant's other fields are kept as they are).
            for name, value in setting.items():
                setattr(assistant, name, value)
            assistant.save(update_fields=list(setting))
        run.assistants[(tenant.slug, assistant.name)] = assistant
        run.counts["assistants"] += created


def _assistant(run: _Import, spec: CallIn, tenant, where: str):
    """The call's assistant: listed in the file, or one the tenant already has; None when the call names none."""
    assistant_name = spec.get("assistant")
    if not assistant_name:
        return None
    key = (tenant.slug, assistant_name)
    if key not in run.assistants:
        run.assistants[key] = Assistant.objects.filter(tenant=tenant, name=assistant_name).first()
    if run.assistants[key] is None:
        raise ImportFormatError(f"{where}: assistant {assistant_name!r} is not listed.")
    return run.assistants[key]


def _recording(run: _Import, spec: CallIn, where: str) -> tuple[Path | None, float | None]:
    """(the call's recording beside the file, its duration); (None, None) for a call without one."""
    recording = spec.get("recording")
    if not recording:
        return None, None
    file_path = run.folder / recording
    if not file_path.is_file():
        raise RecordingMissing(
            f"{where}: recording {recording!r} was not found beside {run.name} (upload it with the calls file).",
            recording,
        )
    info = audio.probe(file_path, label=where)  # refuses files that are not audio, clearly
    _check_recording(info, where, recording)
    return file_path, info.duration_s


def _lines(spec: CallIn, call: Call, where: str, duration_s: float | None) -> list[Line]:
    """The call's lines, checked: at most ONCORE_MAX_LINES_PER_CALL, a known speaker, timing within the recording."""
    max_lines = config().max_lines_per_call
    if len(spec["lines"]) > max_lines:
        raise ImportFormatError(
            f"{where}: {len(spec['lines'])} lines; a call may have at most {max_lines} (ONCORE_MAX_LINES_PER_CALL)."
        )
    lines = []
    for position, ln in enumerate(spec["lines"]):
        lwhere = f"{where}, line {position + 1}"
        if ln["speaker"] not in (Line.CALLER, Line.ASSISTANT):
            raise ImportFormatError(
                f"{lwhere}: speaker must be 'caller' or 'assistant', not {shown(ln['speaker'])}."
            )
        start, end = _timing(ln, lwhere, duration_s)
        lines.append(
            Line(
                call=call,
                position=position,
                speaker=ln["speaker"],
                text=ln.get("text", ""),
                start_s=start,
                end_s=end,
            )
        )
    return lines


def _add_calls(run: _Import, specs: list[CallIn]) -> None:
    """The file's calls with their lines and recordings, in batches; a call imported before is skipped."""
    imported = _imported_before(run.organization, specs)
    batches = _Batches()
    for i, spec in enumerate(specs):
        external_id = spec.get("external_id") or ""
        where = f"call {_label(external_id or i + 1)}"
        tenant = run.tenants.get(spec["tenant"])
        if tenant is None:
            raise ImportFormatError(f"{where}: tenant {spec['tenant']!r} is not in this organization.")
        if external_id and (tenant.pk, external_id) in imported:
            run.counts["skipped"] += 1
            continue
        imported.add((tenant.pk, external_id))
        assistant = _assistant(run, spec, tenant, where)
        live, live_name = _transcriber(spec.get("live_transcriber"), where, run.transcribers)
        started_at = _at(spec["started_at"], where, "started_at", run.shift)
        call = Call(
            tenant=tenant,
            assistant=assistant,
            external_id=external_id,
            started_at=started_at,
            recorded=_recorded(spec, assistant, started_at),
            live_transcriber=live,
            live_transcriber_name=live_name,
        )
        file_path, duration_s = _recording(run, spec, where)
        lines = _lines(spec, call, where, duration_s)
        if file_path is not None:
            with file_path.open("rb") as fh:
                call.recording.save(file_path.name, File(fh), save=False)
        batches.add(call, lines)
        run.counts["calls"] += 1
        run.counts["lines"] += len(lines)
    batches.write()


def do_import_calls(path, organization, *, shift_to=None, name: str | None = None) -> dict:
    """Load a calls file into an organization, its recordings read from the file's folder. Calls already imported
    (same tenant and external_id) are skipped, so importing twice changes nothing. `shift_to` moves every date so
    the file's reference_date lands on that time (demo data stays recent); `name` is how messages name the file
    (the name it was uploaded with). Returns counts. Refuses, naming the call and line, what breaks the format
    (`validate`) or the limits (ONCORE_MAX_IMPORT_FILE_MB, _MAX_LINES_PER_IMPORT, _MAX_RECORDING_S,
    _MAX_SAMPLE_RATE, _MAX_LINES_PER_CALL, line timing within the recording, recordings in WAV, FLAC or Ogg);
    nothing of a refused file is imported. Writes calls and lines in batches (BATCH_LINES)."""
    path = Path(path)
    name = name or path.name
    data = _read(path, name)
    shift = timedelta(0)
    if shift_to is not None and data.reference_date:
        shift = shift_to - parse_moment(data.reference_date, "reference_date")
    run = _Import(organization, path.parent, name, shift)
    with transaction.atomic():
        _add_tenants(run, data.tenants)
        _add_assistants(run, data.assistants)
        _add_calls(run, data.calls)
    return run.counts
