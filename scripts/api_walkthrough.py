"""An integrator's walkthrough of the REST API (/api/v1), through a client generated from the server's schema.

Each step prints what came back, in short:

 1. downloads /api/v1/openapi.json, generates a Python client with openapi-python-client into a temporary
    folder (printing what the generator printed, and stopping if it printed a warning or an error) and imports
    it; from here on it talks to the API through that client only, as docs/api.md describes;
 2. imports one call with its recording (POST /calls/import): the demo call bistro-005 of fixtures/demo/, with
    a new external id, dated now, in a tenant of its own ("api-walkthrough", created by the import);
 3. lists calls, finds the imported one by its external id and reads its lines (which can be flagged, and why
    not);
 4. starts a small webhook receiver on 127.0.0.1 (it checks every delivery's OnCore-Signature as docs/api.md
    says: HMAC-SHA256 of "<t>.<body>" with the endpoint's secret, in constant time, and a timestamp at most
    five minutes old) and registers it for flag.scored and bank.leader_changed (POST /webhooks);
 5. creates a bank (POST /banks, sent twice with one Idempotency-Key to show the replay) and adds local-engine
    candidates, Whisper base and PocketSphinx, which run offline (estimate, then add with confirm);
 6. flags a caller line of the call into that bank with what the caller really said (POST /flags);
 7. waits for the signed flag.scored event of that flag (every candidate scored it and its control lines),
    showing the organization's queue meanwhile, and briefly for the bank's bank.leader_changed;
 8. reads the bank's results, downloads the results CSV and the flagged line's audio (a WAV);
 9. shows the webhook's delivery log, then deletes the webhook (its receiver stops with this script).

Every request carries the organization key and every POST an Idempotency-Key. What it creates stays (the call,
its tenant, the bank and the flag), to look at in the dashboard; only the webhook is deleted.

Against the demo server (`make run`: http://127.0.0.1:8000 and its queue worker)
--------------------------------------------------------------------------------

The server refuses webhook URLs on private and loopback addresses unless the operator allows their network
with ONCORE_WEBHOOK_ALLOW_NETWORKS (oncore/settings.py, README's configuration table, docs/api.md "Webhooks"),
where plain http:// is then accepted too. The receiver listens on 127.0.0.1, so start the server (and its
worker, which checks the URL again before each delivery) with that network allowed; the receiver must be on
the server's machine:

    ONCORE_WEBHOOK_ALLOW_NETWORKS=127.0.0.1/32 make run

Then, in a second terminal, make an organization key for the demo organization ("demo"). Either on the server:

    DEBUG=1 .venv/bin/python manage.py create_api_key --org demo --name walkthrough

which prints the key once, or in the dashboard: log in at http://127.0.0.1:8000/ as demo-admin /
demo-admin-pass, open "API keys" (/settings/api-keys/) and create a key with no tenant (the API refuses tenant
keys). Then:

    ONCORE_API_KEY=onc_... .venv/bin/python scripts/api_walkthrough.py
    .venv/bin/python scripts/api_walkthrough.py --url http://127.0.0.1:8000 --key onc_...

The URL and key come from --url / --key, or ONCORE_URL (default http://127.0.0.1:8000) / ONCORE_API_KEY. Run
it with the project's virtualenv, which has openapi-python-client (and the ruff it formats the client with)
and the generated client's own dependencies (httpx, attrs, python-dateutil). The flag's transcriptions wait
behind whatever the organization has queued: right after `make run` that is the demo's own flags, a few
minutes of a 2-core machine; --wait sets how long to wait for the flag.scored event (20 minutes by default).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import importlib
import io
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import wave
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.request import urlopen

PACKAGE = "oncore_client"
DEMO = Path(__file__).resolve().parents[1] / "fixtures" / "demo"
DEMO_CALL = "bistro-005"  # its first caller line is flagged in the demo: "one fifteen" came out as "115"
TENANT = {"slug": "api-walkthrough", "name": "API walkthrough"}
CANDIDATES = (
    "whisper-base",
    "pocketsphinx-en-us",
)  # local engines, offline; the call's live one is whisper-tiny-en
EVENTS = ("flag.scored", "bank.leader_changed")
SIGNATURE_TOLERANCE_S = 300


class Stop(Exception):
    """The walkthrough cannot go on; the message says why."""


def step(number: int, title: str) -> None:
    print(f"\n[{number}] {title}")


def say(text: str) -> None:
    print(f"    {text}")


def short(text, width: int = 90) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


# ---------------------------------------------------------------- the generated client


def generate_client(base_url: str, folder: Path):
    """Download the schema, generate the client into `folder` and import it."""
    schema_url = f"{base_url}/api/v1/openapi.json"
    with urlopen(schema_url, timeout=60) as answer:
        raw = answer.read()
    schema = json.loads(raw)
    say(
        f"GET {schema_url}: OpenAPI {schema.get('openapi')}, {schema['info']['title']!r} "
        f"{schema['info']['version']}, {len(schema['paths'])} paths, {len(raw):,} bytes"
    )
    (folder / "openapi.json").write_bytes(raw)
    (folder / "config.yml").write_text(f"package_name_override: {PACKAGE}\n")
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    generator = shutil.which("openapi-python-client", path=search)
    if generator is None:
        raise Stop("openapi-python-client is not installed here (pip install openapi-python-client).")
    # Its post-hooks run ruff, installed beside it: put that folder first on the PATH.
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(generator).parent), os.environ.get("PATH", "")])}
    version = subprocess.run([generator, "--version"], capture_output=True, text=True, env=env).stdout.strip()
    command = [
        generator,
        "generate",
        "--path",
        str(folder / "openapi.json"),
        "--output-path",
        str(folder / PACKAGE),
        "--meta",
        "none",
        "--config",
        str(folder / "config.yml"),
    ]
    say(
        f"{version}; running: openapi-python-client generate --path openapi.json --meta none "
        "--config config.yml"
    )
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    output = (result.stdout + result.stderr).strip()
    say("the generator printed:")
    for line in output.splitlines() or ["(nothing)"]:
        say(f"  | {line}")
    if result.returncode != 0:
        raise Stop(f"the generator failed (exit status {result.returncode}).")
    if "warning" in output.lower() or "error" in output.lower():
        raise Stop("the generator printed a warning or an error (above): the client may miss pieces.")
    sys.path.insert(0, str(folder))
    package = importlib.import_module(PACKAGE)
    modules = sorted(p.stem for p in (folder / PACKAGE / "api").glob("*/*.py") if p.stem != "__init__")
    say(f"imported {PACKAGE}: {len(modules)} operations, e.g. {', '.join(modules[:6])}, ...")
    return package


def ok(response, *expected: int):
    """The parsed answer of a generated `sync_detailed` call when its status is one expected; else stop with
    the error's code, message, detail and X-Request-Id."""
    status = int(response.status_code)
    if status in expected:
        return response.parsed
    request_id = response.headers.get("X-Request-Id", "?")
    error = getattr(response.parsed, "error", None)
    if error is not None:
        raise Stop(
            f"HTTP {status} {error.code}: {error.message} detail={error.detail.to_dict()} "
            f"(X-Request-Id {request_id})"
        )
    raise Stop(f"HTTP {status}: {response.content[:300]!r} (X-Request-Id {request_id})")


def new_key() -> str:
    """An Idempotency-Key: a random UUID, as docs/api.md advises."""
    return str(uuid.uuid4())


# ---------------------------------------------------------------- the webhook receiver


def verify(secret: str, header: str, body: bytes, tolerance_s: int = SIGNATURE_TOLERANCE_S) -> bool:
    """docs/api.md's check: the hex HMAC-SHA256 of "<t>.<body>" with the secret, compared in constant time,
    and a timestamp no older than the tolerance (a replay)."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    timestamp, given = parts.get("t", ""), parts.get("v1", "")
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > tolerance_s:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, given)


class Receiver:
    """A webhook endpoint on 127.0.0.1: it answers 200 at once to a delivery whose signature verifies (400
    otherwise) and hands the verified events, each id once, to `events`."""

    path = "/oncore-events"

    def __init__(self, port: int = 0):
        self.secret = ""
        self.secret_known = threading.Event()
        self.events: queue.Queue[dict] = queue.Queue()
        self.earlier: list[dict] = []  # events taken while another was awaited (wait_for)
        self.seen: set[str] = set()
        self.refused = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status = receiver.receive(self.path, dict(self.headers), body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def receive(self, path: str, headers: dict, body: bytes) -> int:
        if path != self.path:
            return 404
        # A delivery may come before the endpoint's answer reached us: wait a moment for its secret.
        self.secret_known.wait(10)
        header = next((v for k, v in headers.items() if k.lower() == "oncore-signature"), "")
        if not verify(self.secret, header, body):
            with self.lock:
                self.refused += 1
            print(f"    receiver: refused a delivery whose signature did not verify ({header[:40]!r})")
            return 400
        event = json.loads(body)
        with self.lock:
            again = event["id"] in self.seen
            self.seen.add(event["id"])
        if not again:  # an event may come twice (a retry, "send again"): handle each id once
            self.events.put(event)
        return 200

    def set_secret(self, secret: str) -> None:
        self.secret = secret
        self.secret_known.set()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def describe(event: dict, names: dict[int, str]) -> str:
    data = event["data"]
    if event["type"] == "flag.scored":
        return f"flag.scored {event['id']}: flag {data['flag']['id']} (bank {data['flag']['bank_id']})"
    if event["type"] == "bank.leader_changed":
        leader = data["leader"]
        previous = data["previous_leader"]
        return (
            f"bank.leader_changed {event['id']}: bank {data['bank']['id']} {data['bank']['name']!r}, leader "
            f"{leader['slug'] if leader else None} (accuracy {data['leader_accuracy']}), previously "
            f"{previous['slug'] if previous else None}, over {data['window_days']} days"
        )
    return f"{event['type']} {event['id']}"


# ---------------------------------------------------------------- the walkthrough


def demo_call(stamp: str) -> tuple[dict, Path, dict]:
    """A one-call import file built from the demo's call (new external id, dated now, the walkthrough's own
    tenant), its recording, and the demo's flag of its first flagged line."""
    calls = json.loads((DEMO / "calls.json").read_text())
    call = next(c for c in calls["calls"] if c["external_id"] == DEMO_CALL)
    assistant = next(
        a for a in calls["assistants"] if a["tenant"] == call["tenant"] and a["name"] == call["assistant"]
    )
    spec = next(f for f in json.loads((DEMO / "flags.json").read_text())["flags"] if f["call"] == DEMO_CALL)
    now = datetime.now(UTC).replace(microsecond=0)
    document = {
        "format": "oncore-calls/1",
        "reference_date": now.isoformat(),
        "tenants": [TENANT],
        "assistants": [{**assistant, "tenant": TENANT["slug"]}],
        "calls": [
            {
                **call,
                "external_id": f"{DEMO_CALL}-walkthrough-{stamp}",
                "tenant": TENANT["slug"],
                "started_at": (now - timedelta(minutes=5)).isoformat(),
            }
        ],
    }
    return document, DEMO / call["recording"], spec


def walkthrough(args, folder: Path) -> None:
    started = time.monotonic()
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")

    step(1, "Generate a client from the server's OpenAPI schema")
    package = generate_client(args.url, folder)
    import httpx  # the generated client's own HTTP library: only its timeout is set here

    client = package.AuthenticatedClient(
        base_url=args.url, token=args.key, raise_on_unexpected_status=True, timeout=httpx.Timeout(120.0)
    )
    from oncore_client.api.catalogue_and_organization import get_organization

    organization = ok(get_organization.sync_detailed(client=client), 200)
    say(
        f"GET /organization: {organization.name!r} ({organization.slug}), "
        f"{len(organization.tenants)} tenants: {', '.join(t.slug for t in organization.tenants)}"
    )

    line, spec = import_and_read(client, stamp)

    step(4, f"Start a webhook receiver on 127.0.0.1 and register it for {', '.join(EVENTS)}")
    from oncore_client.api.webhooks import create_webhook, delete_webhook
    from oncore_client.models import WebhookIn
    from oncore_client.models.webhook_in_events_item import WebhookInEventsItem

    receiver = Receiver(args.receiver_port)
    webhook = None
    try:
        say(f"receiver listening at {receiver.url}")
        answer = create_webhook.sync_detailed(
            client=client,
            body=WebhookIn(
                url=receiver.url,
                events=[WebhookInEventsItem(e) for e in EVENTS],
                description=f"scripts/api_walkthrough.py {stamp}",
            ),
            idempotency_key=new_key(),
        )
        if str(getattr(getattr(answer.parsed, "error", None), "code", "")) == "webhook_url_not_allowed":
            say(
                "the server refuses 127.0.0.1: start it (and its queue worker) with "
                "ONCORE_WEBHOOK_ALLOW_NETWORKS=127.0.0.1/32 (see this script's docstring)"
            )
        webhook = ok(answer, 201)
        receiver.set_secret(webhook.secret)
        say(
            f"POST /webhooks: webhook {webhook.id}, events {[str(e) for e in webhook.events]}, enabled "
            f"{webhook.enabled}, secret {webhook.secret[:10]}… "
            "(shown once; the receiver checks signatures with it)"
        )
        bank_flag_results(client, receiver, webhook.id, line, spec, args, stamp)
    finally:
        receiver.stop()
        if webhook is not None:
            gone = delete_webhook.sync_detailed(webhook.id, client=client)
            say(
                f"DELETE /webhooks/{webhook.id}: HTTP {int(gone.status_code)} "
                "(its receiver stopped with the script)"
            )
    say(f"done in {time.monotonic() - started:.0f} s")


def import_and_read(client, stamp: str):
    """Steps 2 and 3: import the call, list calls, read its lines. Returns the line to flag and its spec."""
    from oncore_client.api.calls import get_call, import_calls, list_calls
    from oncore_client.models import ImportCallsFileParams
    from oncore_client.types import File

    step(2, f"Import a call with its recording (the demo's {DEMO_CALL}, as a new call)")
    document, recording, spec = demo_call(stamp)
    external_id = document["calls"][0]["external_id"]
    body = ImportCallsFileParams(
        file=File(payload=io.BytesIO(json.dumps(document).encode()), file_name="calls.json"),
        recordings=[File(payload=io.BytesIO(recording.read_bytes()), file_name=recording.name)],
    )
    imported = ok(import_calls.sync_detailed(client=client, body=body, idempotency_key=new_key()), 200)
    say(
        f"POST /calls/import (calls.json + {recording.name}, {recording.stat().st_size:,} bytes): "
        f"{imported.to_dict()}"
    )

    step(3, "List calls and read the imported call's lines")
    page = ok(list_calls.sync_detailed(client=client, limit=3), 200)
    say(f"GET /calls?limit=3: count {page.count}, has_more {page.has_more}; newest first:")
    for c in page.items:
        say(
            f"  call {c.id} {c.external_id} ({c.tenant.slug}), {c.started_at:%Y-%m-%d %H:%M}Z, "
            f"{c.lines} lines"
        )
    found = ok(list_calls.sync_detailed(client=client, external_id=external_id), 200)
    if found.count != 1:
        raise Stop(f"GET /calls?external_id={external_id} found {found.count} calls, not 1.")
    call = ok(get_call.sync_detailed(found.items[0].id, client=client), 200)
    say(
        f"GET /calls/{call.id}: {call.external_id}, tenant {call.tenant.slug}, live transcriber "
        f"{call.live_transcriber.slug if call.live_transcriber else call.live_transcriber_name}, "
        f"{len(call.line_items)} lines:"
    )
    for item in call.line_items:
        can = "flaggable" if item.flaggable else f"not flaggable: {item.not_flaggable.code}"
        say(f"  line {item.id} #{item.position} {item.speaker:9} {short(item.text, 60)!r} ({can})")
    line = next(item for item in call.line_items if item.position == spec["position"])
    if not line.flaggable:
        raise Stop(
            f"line {line.id} cannot be flagged: {line.not_flaggable.code}: {line.not_flaggable.message}"
        )
    return line, spec


def bank_flag_results(
    client, receiver: Receiver, webhook_id: int, line, spec: dict, args, stamp: str
) -> None:
    """Steps 5 to 9, with the receiver running and the webhook registered."""
    from oncore_client.api.banks import create_bank
    from oncore_client.api.calls import line_audio
    from oncore_client.api.candidates import add_candidate, estimate_candidate
    from oncore_client.api.catalogue_and_organization import list_transcribers
    from oncore_client.api.flags import create_flag
    from oncore_client.api.queue import queue_status
    from oncore_client.api.results import bank_results, export_results
    from oncore_client.api.webhooks import list_deliveries
    from oncore_client.models import BankIn, CandidateIn, FlagIn

    step(5, f"Create a bank with local-engine candidates ({', '.join(CANDIDATES)})")
    catalogue = ok(list_transcribers.sync_detailed(client=client, enabled=True, limit=200), 200)
    by_slug = {t.slug: t for t in catalogue.items}
    names = {t.id: t.slug for t in catalogue.items}
    say(f"GET /transcribers?enabled=true: {catalogue.count} enabled: {', '.join(sorted(by_slug))}")
    missing = [slug for slug in CANDIDATES if slug not in by_slug]
    if missing:
        raise Stop(f"the catalogue has no enabled {', '.join(missing)}.")
    bank_body = BankIn(name=f"API walkthrough {stamp}", language_label="English")
    bank_key = new_key()
    first = create_bank.sync_detailed(client=client, body=bank_body, idempotency_key=bank_key)
    bank = ok(first, 201)
    say(
        f"POST /banks: bank {bank.id} {bank.name!r}, threshold {bank.threshold}, "
        f"{bank.controls_per_flag} control line per flag (Location: {first.headers.get('Location')})"
    )
    again = create_bank.sync_detailed(client=client, body=bank_body, idempotency_key=bank_key)
    replayed = ok(again, 201)
    say(
        f"POST /banks again with the same Idempotency-Key: HTTP {int(again.status_code)}, "
        f"bank {replayed.id}, "
        f"Idempotent-Replayed: {again.headers.get('Idempotent-Replayed')}"
    )
    if replayed.id != bank.id:
        raise Stop(f"the replay made another bank ({replayed.id}), not the first answer ({bank.id}).")
    for slug in CANDIDATES:
        transcriber = by_slug[slug]
        estimate = ok(
            estimate_candidate.sync_detailed(bank.id, client=client, transcriber_id=transcriber.id), 200
        )
        say(
            f"GET /banks/{bank.id}/candidates/estimate?transcriber_id={transcriber.id} ({slug}): "
            f"{estimate.lines} lines, {estimate.audio_minutes} min, ${estimate.cost}"
        )
        added = ok(
            add_candidate.sync_detailed(
                bank.id,
                client=client,
                body=CandidateIn(transcriber_id=transcriber.id, confirm=True),
                idempotency_key=new_key(),
            ),
            201,
        )
        say(
            f"POST /banks/{bank.id}/candidates: {added.transcriber.slug} at position {added.position} "
            f"({added.transcriber.provider}, ${added.transcriber.price_per_minute}/min)"
        )

    step(6, f"Flag caller line {line.id} with what was said")
    flag = ok(
        create_flag.sync_detailed(
            client=client,
            body=FlagIn(
                line_id=line.id,
                expected_text=spec["expected_text"],
                bank_id=bank.id,
                tags=spec["tags"],
                note=spec["note"],
            ),
            idempotency_key=new_key(),
        ),
        201,
    )
    say(f"POST /flags: flag {flag.id} in bank {flag.bank_id}, tags {flag.tags}")
    say(f"  production (live) text: {flag.production_text!r}")
    say(f"  expected text:          {flag.expected_text!r}")
    for control in flag.controls:
        say(f"  control line {control.line_id}: {short(control.expected_text, 70)!r}")

    step(7, f"Wait for the signed flag.scored event of flag {flag.id} (at most {args.wait} s)")
    scored = wait_for(
        client,
        receiver,
        names,
        lambda e: e["type"] == "flag.scored" and e["data"]["flag"]["id"] == flag.id,
        args.wait,
        queue_status,
    )
    if scored is None:
        raise Stop(
            f"no flag.scored event for flag {flag.id} within {args.wait} s ({receiver.refused} deliveries "
            "refused). Is the queue worker running (manage.py qcluster), with ONCORE_WEBHOOK_ALLOW_NETWORKS "
            "allowing 127.0.0.1?"
        )
    data = scored["data"]
    production = data["production"]
    say(
        f"flag.scored {scored['id']} (created {scored['created_at']}): production "
        f"{production['text']!r} match {production['match']} wer {production['wer']}"
    )
    for cell in data["candidates"]:
        say(
            f"  {names.get(cell['transcriber_id'], cell['transcriber_id'])}: {cell['text']!r} "
            f"match {cell['match']} "
            f"wer {cell['wer']}" + (f" failed ({cell['failure']})" if cell["failed"] else "")
        )
    leader = wait_for(
        client,
        receiver,
        names,
        lambda e: e["type"] == "bank.leader_changed" and e["data"]["bank"]["id"] == bank.id,
        args.leader_wait,
        None,
    )
    if leader is None:
        say(f"no bank.leader_changed for bank {bank.id} within {args.leader_wait} s (checked once a minute)")

    step(8, f"Read bank {bank.id}'s results and download the results CSV and line {line.id}'s audio")
    results = ok(bank_results.sync_detailed(bank.id, client=client), 200)
    say(
        f"GET /banks/{bank.id}/results: window {results.window_days} days, pending {results.pending}, leader "
        f"{names.get(results.leader.transcriber_id) if results.leader else None}"
        + (
            f" (clears threshold {results.threshold}: {results.leader.clears_threshold})"
            if results.leader
            else ""
        )
    )
    for card in results.candidates:
        say(
            f"  candidate {card.transcriber.slug}: {card.matches}/{card.scored} match, failed {card.failed}, "
            f"accuracy {card.accuracy}, mean WER {card.mean_wer}, audio ${card.audio_cost}"
            + (" (leader)" if card.is_leader else "")
        )
    for row in results.production:
        say(
            f"  production {row.transcriber.slug}: {row.matches}/{row.scored} match, "
            f"accuracy {row.accuracy}, "
            f"mean WER {row.mean_wer}"
        )
    csv = ok(export_results.sync_detailed(bank.id, client=client), 200)
    rows = csv.lstrip("\ufeff").splitlines()
    say(f"GET /banks/{bank.id}/results.csv: {type(csv).__name__}, {len(csv)} characters, {len(rows)} rows:")
    for row in rows:
        say(f"  | {short(row, 220)}")
    audio = ok(line_audio.sync_detailed(line.id, client=client), 200)
    wav = audio.payload.read()
    if wav[:4] != b"RIFF" or wav[8:12] != b"WAVE":
        raise Stop(f"GET /lines/{line.id}/audio did not answer a WAV: {wav[:16]!r}")
    with wave.open(io.BytesIO(wav)) as reader:
        shape = (
            f"{reader.getnchannels()} channels, {reader.getframerate()} Hz, "
            f"{reader.getnframes() / reader.getframerate():.2f} s"
        )
    say(f"GET /lines/{line.id}/audio: {len(wav):,} bytes, {wav[:4]!r}…{wav[8:12]!r}, {shape}")

    step(9, f"Webhook {webhook_id}'s delivery log")
    log = ok(list_deliveries.sync_detailed(webhook_id, client=client, limit=10), 200)
    say(f"GET /webhooks/{webhook_id}/deliveries: {log.count} deliveries, newest first:")
    for delivery in log.items:
        say(
            f"  {delivery.event_type} {delivery.event_id}: {delivery.status}, "
            f"{delivery.attempts} attempt(s), "
            f"HTTP {delivery.response_status}" + (f", {delivery.error}" if delivery.error else "")
        )
    say(f"receiver: {len(receiver.seen)} events verified, {receiver.refused} refused")


def wait_for(client, receiver: Receiver, names: dict, wanted, timeout_s: float, queue_status):
    """The first verified event `wanted` accepts, printing every event that comes meanwhile (and the
    organization's queue every 30 s when `queue_status` is given); None after `timeout_s`. An event that came
    while another was awaited counts too (bank.leader_changed can come before the flag.scored awaited first)."""
    for event in receiver.earlier:
        if wanted(event):
            receiver.earlier.remove(event)
            say("received earlier " + describe(event, names))
            return event
    deadline = time.monotonic() + timeout_s
    next_report = time.monotonic()
    while True:
        now = time.monotonic()
        if queue_status is not None and now >= next_report:
            status = ok(queue_status.sync_detailed(client=client), 200)
            say(
                f"GET /queue: {status.queued} queued, {status.running} running "
                f"(concurrency {status.concurrency})"
            )
            next_report = now + 30
        if now >= deadline:
            return None
        try:
            event = receiver.events.get(timeout=min(1.0, deadline - now))
        except queue.Empty:
            continue
        mine = wanted(event)
        say(("received " if mine else "received (not the one awaited) ") + describe(event, names))
        if mine:
            return event
        receiver.earlier.append(event)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("ONCORE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--key", default=os.environ.get("ONCORE_API_KEY", ""))
    parser.add_argument("--wait", type=float, default=1200, help="seconds to wait for flag.scored")
    parser.add_argument(
        "--leader-wait", type=float, default=90, help="seconds to wait for bank.leader_changed"
    )
    parser.add_argument(
        "--receiver-port", type=int, default=0, help="the receiver's port (default: any free)"
    )
    args = parser.parse_args()
    args.url = args.url.rstrip("/")
    if not args.key:
        parser.error("give an organization API key: --key or ONCORE_API_KEY (see this script's docstring)")
    sys.stdout.reconfigure(line_buffering=True)
    print(f"OnCore API walkthrough against {args.url}")
    with tempfile.TemporaryDirectory(prefix="oncore-walkthrough-") as folder:
        try:
            walkthrough(args, Path(folder))
        except Stop as stop:
            print(f"\nSTOPPED: {stop}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
