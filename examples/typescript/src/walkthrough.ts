// The integrator walk of scripts/api_walkthrough.py, in strict TypeScript, through a client generated from the
// server's OpenAPI schema: openapi-typescript (its default settings) writes generated/schema.d.ts, openapi-fetch
// sends the requests. docs/api.md ("TypeScript") says how to generate, type-check and run it.
//
//  1. reads the organization (GET /organization);
//  2. imports one call with its recording (POST /calls/import, multipart): the demo call bistro-005 of
//     fixtures/demo/, with a new external id, dated now, in a tenant of its own ("api-walkthrough");
//  3. lists calls a page at a time (`limit`, then `after` = the page's `next_after`), finds the imported one by
//     its external id and reads its lines (which can be flagged, and why not);
//  4. starts a webhook receiver on 127.0.0.1 that checks every delivery's OnCore-Signature (src/signature.ts)
//     and registers it for flag.scored and bank.leader_changed (POST /webhooks);
//  5. creates a bank (POST /banks, sent twice with one Idempotency-Key to show the replay) and adds
//     local-engine candidates, Whisper base and PocketSphinx (estimate, then add with confirm);
//  6. flags a caller line of the call into that bank with what the caller really said (POST /flags);
//  7. waits for the signed flag.scored event of that flag, showing the queue meanwhile, and briefly for the
//     bank's bank.leader_changed;
//  8. reads the bank's results, downloads the results CSV (text) and the flagged line's audio (bytes, a WAV);
//  9. shows the webhook's delivery log, then deletes the webhook.
//
//     node dist/src/walkthrough.js --url http://127.0.0.1:8000 --key onc_...   (or ONCORE_URL, ONCORE_API_KEY)

import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import createClient from "openapi-fetch";

import type { components, paths } from "../generated/schema.js";
import { Receiver, type WebhookEvent } from "./receiver.js";

type Schemas = components["schemas"];
type Client = ReturnType<typeof createClient<paths>>;

const DEMO = resolve(dirname(fileURLToPath(import.meta.url)), "../../../../fixtures/demo");
const DEMO_CALL = "bistro-005"; // its first caller line is flagged in the demo: "one fifteen" came out as "115"
const TENANT = { slug: "api-walkthrough", name: "API walkthrough" };
const CANDIDATES = ["whisper-base", "pocketsphinx-en-us"]; // local engines, offline
const EVENTS = ["flag.scored", "bank.leader_changed"] as const satisfies Schemas["WebhookIn"]["events"];

class Stop extends Error {}

const say = (text: string): void => console.log(`    ${text}`);
const step = (n: number, title: string): void => console.log(`\n[${n}] ${title}`);
const short = (text: string | null | undefined, width = 90): string => {
  const t = text ?? "";
  return t.length <= width ? t : `${t.slice(0, width - 1)}…`;
};
/** An Idempotency-Key: a random UUID, as docs/api.md advises. */
const newKey = (): string => randomUUID();

// ---------------------------------------------------------------- answers

/** The common error type: every operation's errors (typed exactly, a union on `code`) are each an ErrorOut, so
 * one function reads them all; the compiler checks that for every operation the walk calls (`ok`). */
type ErrorBody = Schemas["ErrorOut"];
/** What openapi-fetch answers: the parsed success body, or the parsed error body, with the Response. */
type Answer<D, E> = { data: D; error?: never; response: Response } | { data?: never; error: E; response: Response };

function describeError(error: ErrorBody, response: Response): string {
  const { code, message, detail } = error.error;
  return (
    `HTTP ${response.status} ${code}: ${message} detail=${JSON.stringify(detail)} ` +
    `(X-Request-Id ${response.headers.get("X-Request-Id") ?? "?"})`
  );
}

/** The success body when the status is one expected; else stop with the error's code, message and detail. */
function ok<D, E extends ErrorBody>(answer: Answer<D, E>, ...expected: number[]): NonNullable<D> {
  const { data, error, response } = answer;
  if (error !== undefined) throw new Stop(describeError(error, response));
  if (!expected.includes(response.status)) throw new Stop(`HTTP ${response.status}, expected ${expected.join(" or ")}`);
  if (data === undefined || data === null) throw new Stop(`HTTP ${response.status} without a body`);
  return data;
}

// ---------------------------------------------------------------- the demo call

type DemoLine = { speaker: string; text: string; start_s?: number; end_s?: number; said?: string };
type DemoCall = {
  external_id: string;
  tenant: string;
  assistant: string;
  started_at: string;
  recording: string;
  lines: DemoLine[];
  [field: string]: unknown;
};
type DemoAssistant = { tenant: string; name: string; [field: string]: unknown };
type CallsFile = { format: string; tenants: unknown[]; assistants: DemoAssistant[]; calls: DemoCall[] };
type DemoFlag = { call: string; position: number; expected_text: string; tags: string[]; note: string };

function readJson<T>(path: string): T {
  // The demo fixtures are this repository's own files, in the documented import format.
  const value: T = JSON.parse(readFileSync(path, "utf8"));
  return value;
}

function demoCall(stamp: string): { document: object; recording: string; spec: DemoFlag } {
  const calls = readJson<CallsFile>(resolve(DEMO, "calls.json"));
  const call = calls.calls.find((c) => c.external_id === DEMO_CALL);
  const assistant = calls.assistants.find((a) => a.tenant === call?.tenant && a.name === call?.assistant);
  const flags = readJson<{ flags: DemoFlag[] }>(resolve(DEMO, "flags.json")).flags;
  const spec = flags.find((f) => f.call === DEMO_CALL);
  if (call === undefined || assistant === undefined || spec === undefined) {
    throw new Stop(`fixtures/demo has no call ${DEMO_CALL} with its assistant and flag.`);
  }
  const now = new Date(Math.floor(Date.now() / 1000) * 1000);
  const document = {
    format: "oncore-calls/1",
    reference_date: now.toISOString(),
    tenants: [TENANT],
    assistants: [{ ...assistant, tenant: TENANT.slug }],
    calls: [
      {
        ...call,
        external_id: `${DEMO_CALL}-ts-walkthrough-${stamp}`,
        tenant: TENANT.slug,
        started_at: new Date(now.getTime() - 5 * 60_000).toISOString(),
      },
    ],
  };
  return { document, recording: resolve(DEMO, call.recording), spec };
}

/** A WAV's channels, rate and length, from its `fmt ` and `data` chunks. */
function wavShape(bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Stop("the audio is not a WAV");
  let channels = 0;
  let rate = 0;
  let bytesPerFrame = 0;
  let dataBytes = 0;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === "fmt ") {
      channels = view.getUint16(at + 10, true);
      rate = view.getUint32(at + 12, true);
      bytesPerFrame = view.getUint16(at + 20, true);
    } else if (tag(at) === "data") {
      dataBytes = Math.min(size, bytes.length - at - 8);
    }
    at += 8 + size + (size % 2);
  }
  const seconds = rate && bytesPerFrame ? dataBytes / bytesPerFrame / rate : 0;
  return `${channels} channels, ${rate} Hz, ${seconds.toFixed(2)} s`;
}

// ---------------------------------------------------------------- the walkthrough

async function importAndRead(client: Client, stamp: string): Promise<{ line: Schemas["LineOut"]; spec: DemoFlag }> {
  step(2, `Import a call with its recording (the demo's ${DEMO_CALL}, imported anew)`);
  const { document, recording, spec } = demoCall(stamp);
  const name = basename(recording);
  const form = new FormData();
  form.append("file", new Blob([JSON.stringify(document)], { type: "application/json" }), "calls.json");
  form.append("recordings", new Blob([readFileSync(recording)], { type: "audio/flac" }), name);
  // The schema types a file part as a string (format: binary); the typed body names the files and the
  // serializer sends the FormData that holds them.
  const imported = ok(
    await client.POST("/api/v1/calls/import", {
      params: { header: { "Idempotency-Key": newKey() } },
      body: { file: "calls.json", recordings: [name] },
      bodySerializer: () => form,
    }),
    200,
  );
  say(
    `POST /calls/import (calls.json + ${name}, ${statSync(recording).size.toLocaleString("en")} bytes): ` +
      `${imported.calls} calls, ${imported.lines} lines, ${imported.skipped} skipped`,
  );

  step(3, "List calls a page at a time and read the imported call's lines");
  const first = ok(await client.GET("/api/v1/calls", { params: { query: { limit: 3 } } }), 200);
  say(`GET /calls?limit=3: count ${first.count}, has_more ${first.has_more}; newest first:`);
  for (const c of first.items) {
    say(`  call ${c.id} ${c.external_id} (${c.tenant.slug}), ${c.started_at}, ${c.lines} lines`);
  }
  if (first.next_after !== null) {
    const after = first.next_after;
    const second = ok(await client.GET("/api/v1/calls", { params: { query: { limit: 3, after } } }), 200);
    say(
      `GET /calls?limit=3&after=${after}: the next ${second.items.length} ` +
        `(${second.items.map((c) => c.id).join(", ")}), next_after ${second.next_after ?? "null (the last page)"}`,
    );
  }
  const externalId = `${DEMO_CALL}-ts-walkthrough-${stamp}`;
  const found = ok(await client.GET("/api/v1/calls", { params: { query: { external_id: externalId } } }), 200);
  const listed = found.items[0];
  if (found.count !== 1 || listed === undefined) {
    throw new Stop(`GET /calls?external_id=${externalId} found ${found.count} calls, not 1.`);
  }
  const call = ok(await client.GET("/api/v1/calls/{call_id}", { params: { path: { call_id: listed.id } } }), 200);
  say(
    `GET /calls/${call.id}: ${call.external_id}, tenant ${call.tenant.slug}, live transcriber ` +
      `${call.live_transcriber?.slug ?? call.live_transcriber_name}, ${call.line_items.length} lines:`,
  );
  for (const item of call.line_items) {
    // `speaker` and `not_flaggable.code` are enums: a misspelt comparison would not compile.
    const can = item.not_flaggable === null ? "flaggable" : `not flaggable: ${item.not_flaggable.code}`;
    say(`  line ${item.id} #${item.position} ${item.speaker.padEnd(9)} '${short(item.text, 60)}' (${can})`);
  }
  const line = call.line_items.find((item) => item.position === spec.position);
  if (line === undefined) throw new Stop(`call ${call.id} has no line at position ${spec.position}.`);
  if (line.not_flaggable !== null) {
    throw new Stop(`line ${line.id} cannot be flagged: ${line.not_flaggable.code}: ${line.not_flaggable.message}`);
  }
  return { line, spec };
}

function describe(event: WebhookEvent, names: Map<number, string>): string {
  switch (event.type) {
    case "flag.scored":
      return `flag.scored ${event.id}: flag ${event.data.flag.id} (bank ${event.data.flag.bank_id})`;
    case "bank.leader_changed": {
      const { bank, leader, leader_accuracy: accuracy, previous_leader: previous, window_days: days } = event.data;
      return (
        `bank.leader_changed ${event.id}: bank ${bank.id} '${bank.name}', leader ${leader?.slug ?? null} ` +
        `(accuracy ${accuracy}), previously ${previous?.slug ?? null}, over ${days} days`
      );
    }
    case "run.finished":
    case "run.judge_failed":
      return `${event.type} ${event.id}: run ${event.data.run.id} ${event.data.run.status} (${names.size} known)`;
  }
}

/** The first verified event `wanted` accepts, printing the others meanwhile (and the queue every 30 s when
 * `showQueue`); null after `timeoutS`. */
async function waitFor<T extends WebhookEvent>(
  client: Client,
  receiver: Receiver,
  names: Map<number, string>,
  wanted: (event: WebhookEvent) => event is T,
  timeoutS: number,
  showQueue: boolean,
): Promise<T | null> {
  // Events come in any order: the one awaited may have come while an earlier wait printed it.
  const earlier = receiver.received.find(wanted);
  if (earlier !== undefined) {
    say(`received earlier: ${describe(earlier, names)}`);
    return earlier;
  }
  const deadline = Date.now() + timeoutS * 1000;
  let nextReport = Date.now();
  for (;;) {
    if (showQueue && Date.now() >= nextReport) {
      const status = ok(await client.GET("/api/v1/queue"), 200);
      say(`GET /queue: ${status.queued} queued, ${status.running} running (concurrency ${status.concurrency})`);
      nextReport = Date.now() + 30_000;
    }
    if (Date.now() >= deadline) return null;
    const event = await receiver.next(Math.min(1000, deadline - Date.now()));
    if (event === null) continue;
    const mine = wanted(event);
    say(`${mine ? "received " : "received (not the one awaited) "}${describe(event, names)}`);
    if (mine) return event;
  }
}

type Options = { wait: number; leaderWait: number };

async function bankFlagResults(
  client: Client,
  receiver: Receiver,
  webhookId: number,
  line: Schemas["LineOut"],
  spec: DemoFlag,
  options: Options,
  stamp: string,
): Promise<void> {
  step(5, `Create a bank with local-engine candidates (${CANDIDATES.join(", ")})`);
  const catalogue = ok(
    await client.GET("/api/v1/transcribers", { params: { query: { enabled: true, limit: 200 } } }),
    200,
  );
  const bySlug = new Map(catalogue.items.map((t) => [t.slug, t]));
  const names = new Map(catalogue.items.map((t) => [t.id, t.slug]));
  say(`GET /transcribers?enabled=true: ${catalogue.count} enabled: ${[...bySlug.keys()].sort().join(", ")}`);
  const missing = CANDIDATES.filter((slug) => !bySlug.has(slug));
  if (missing.length) throw new Stop(`the catalogue has no enabled ${missing.join(", ")}.`);

  // Only the name is required: the other fields have server defaults (threshold 0.6, one control line).
  const bankBody: Schemas["BankIn"] = { name: `API walkthrough (TypeScript) ${stamp}`, language_label: "English" };
  const bankKey = newKey();
  const first = await client.POST("/api/v1/banks", { params: { header: { "Idempotency-Key": bankKey } }, body: bankBody });
  const bank = ok(first, 201);
  say(
    `POST /banks: bank ${bank.id} '${bank.name}', threshold ${bank.threshold.toFixed(2)}, ` +
      `${bank.controls_per_flag} control line per flag (Location: ${first.response.headers.get("Location")})`,
  );
  const again = await client.POST("/api/v1/banks", { params: { header: { "Idempotency-Key": bankKey } }, body: bankBody });
  const replayed = ok(again, 201);
  say(
    `POST /banks again with the same Idempotency-Key: HTTP ${again.response.status}, bank ${replayed.id}, ` +
      `Idempotent-Replayed: ${again.response.headers.get("Idempotent-Replayed")}`,
  );
  if (replayed.id !== bank.id) throw new Stop(`the replay made another bank (${replayed.id}), not ${bank.id}.`);

  for (const slug of CANDIDATES) {
    const transcriber = bySlug.get(slug);
    if (transcriber === undefined) continue;
    const estimate = ok(
      await client.GET("/api/v1/banks/{bank_id}/candidates/estimate", {
        params: { path: { bank_id: bank.id }, query: { transcriber_id: transcriber.id } },
      }),
      200,
    );
    say(
      `GET /banks/${bank.id}/candidates/estimate?transcriber_id=${transcriber.id} (${slug}): ` +
        `${estimate.lines} lines, ${estimate.audio_minutes} min, $${estimate.cost}`,
    );
    const added = await client.POST("/api/v1/banks/{bank_id}/candidates", {
      params: { path: { bank_id: bank.id }, header: { "Idempotency-Key": newKey() } },
      body: { transcriber_id: transcriber.id, confirm: true },
    });
    // A typed refusal: `detail` of estimate_not_confirmed is the candidate estimate here, no cast needed.
    if (added.error?.error.code === "estimate_not_confirmed") {
      throw new Stop(`confirm the estimate: $${added.error.error.detail.cost} for ${added.error.error.detail.lines} lines`);
    }
    const candidate = ok(added, 201);
    say(
      `POST /banks/${bank.id}/candidates: ${candidate.transcriber.slug} at position ${candidate.position} ` +
        `(${candidate.transcriber.provider}, $${candidate.transcriber.price_per_minute}/min)`,
    );
  }

  step(6, `Flag caller line ${line.id} with what was said`);
  const flag = ok(
    await client.POST("/api/v1/flags", {
      params: { header: { "Idempotency-Key": newKey() } },
      body: { line_id: line.id, expected_text: spec.expected_text, bank_id: bank.id, tags: spec.tags, note: spec.note },
    }),
    201,
  );
  say(`POST /flags: flag ${flag.id} in bank ${flag.bank_id}, tags ${JSON.stringify(flag.tags)}`);
  say(`  production (live) text: '${flag.production_text}'`);
  say(`  expected text:          '${flag.expected_text}'`);
  for (const control of flag.controls) say(`  control line ${control.line_id}: '${short(control.expected_text, 70)}'`);

  step(7, `Wait for the signed flag.scored event of flag ${flag.id} (at most ${options.wait} s)`);
  const scored = await waitFor(
    client,
    receiver,
    names,
    (e): e is Extract<WebhookEvent, { type: "flag.scored" }> => e.type === "flag.scored" && e.data.flag.id === flag.id,
    options.wait,
    true,
  );
  if (scored === null) {
    throw new Stop(
      `no flag.scored event for flag ${flag.id} within ${options.wait} s (${receiver.refused} deliveries refused). ` +
        "Is the queue worker running (manage.py qcluster), with ONCORE_WEBHOOK_ALLOW_NETWORKS allowing 127.0.0.1?",
    );
  }
  const production = scored.data.production;
  say(
    `flag.scored ${scored.id} (created ${scored.created_at}): production '${production?.text ?? ""}' ` +
      `match ${production?.match ?? null} wer ${production?.wer ?? null}`,
  );
  for (const cell of scored.data.candidates) {
    say(
      `  ${names.get(cell.transcriber_id) ?? cell.transcriber_id}: '${cell.text ?? ""}' match ${cell.match} ` +
        `wer ${cell.wer}${cell.failed ? ` failed (${cell.failure})` : ""}`,
    );
  }
  const leader = await waitFor(
    client,
    receiver,
    names,
    (e): e is Extract<WebhookEvent, { type: "bank.leader_changed" }> =>
      e.type === "bank.leader_changed" && e.data.bank.id === bank.id,
    options.leaderWait,
    false,
  );
  if (leader === null) say(`no bank.leader_changed for bank ${bank.id} within ${options.leaderWait} s`);

  step(8, `Read bank ${bank.id}'s results and download the results CSV and line ${line.id}'s audio`);
  const results = ok(
    await client.GET("/api/v1/banks/{bank_id}/results", { params: { path: { bank_id: bank.id } } }),
    200,
  );
  const lead = results.leader;
  say(
    `GET /banks/${bank.id}/results: window ${results.window_days} days, pending ${results.pending}, leader ` +
      `${lead ? names.get(lead.transcriber_id) : null}` +
      (lead ? ` (clears threshold ${results.threshold}: ${lead.clears_threshold})` : ""),
  );
  for (const card of results.candidates) {
    say(
      `  candidate ${card.transcriber.slug}: ${card.matches}/${card.scored} match, failed ${card.failed}, ` +
        `accuracy ${card.accuracy}, mean WER ${card.mean_wer}, audio $${card.audio_cost}` +
        (card.is_leader ? " (leader)" : ""),
    );
  }
  for (const row of results.production) {
    say(`  production ${row.transcriber.slug}: ${row.matches}/${row.scored} match, accuracy ${row.accuracy}`);
  }
  // A CSV download is text: openapi-fetch parses JSON unless told `parseAs`.
  const csv = ok(
    await client.GET("/api/v1/banks/{bank_id}/results.csv", { params: { path: { bank_id: bank.id } }, parseAs: "text" }),
    200,
  );
  const rows = csv.replace(/^\ufeff/, "").split(/\r?\n/).filter(Boolean);
  say(`GET /banks/${bank.id}/results.csv: ${csv.length} characters, ${rows.length} rows:`);
  for (const row of rows) say(`  | ${short(row, 220)}`);
  // And a line's audio is bytes.
  const audio = ok(
    await client.GET("/api/v1/lines/{line_id}/audio", { params: { path: { line_id: line.id } }, parseAs: "arrayBuffer" }),
    200,
  );
  const wav = new Uint8Array(audio);
  say(`GET /lines/${line.id}/audio: ${wav.length.toLocaleString("en")} bytes, ${wavShape(wav)}`);

  step(9, `Webhook ${webhookId}'s delivery log`);
  const log = ok(
    await client.GET("/api/v1/webhooks/{webhook_id}/deliveries", {
      params: { path: { webhook_id: webhookId }, query: { limit: 10 } },
    }),
    200,
  );
  say(`GET /webhooks/${webhookId}/deliveries: ${log.count} deliveries, newest first:`);
  for (const d of log.items) {
    say(
      `  ${d.event_type} ${d.event_id}: ${d.status}, ${d.attempts} attempt(s), HTTP ${d.response_status}` +
        (d.error ? `, ${d.error}` : ""),
    );
  }
  say(`receiver: ${receiver.seen.size} events verified, ${receiver.refused} refused`);
}

async function walkthrough(url: string, key: string, options: Options & { receiverPort: number }): Promise<void> {
  const started = Date.now();
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);

  step(1, "A client typed from the server's OpenAPI schema (generated/schema.d.ts)");
  const client = createClient<paths>({ baseUrl: url, headers: { Authorization: `Bearer ${key}` } });
  const organization = ok(await client.GET("/api/v1/organization"), 200);
  say(
    `GET /organization: '${organization.name}' (${organization.slug}), ${organization.tenants.length} tenants: ` +
      organization.tenants.map((t) => t.slug).join(", "),
  );

  const { line, spec } = await importAndRead(client, stamp);

  step(4, `Start a webhook receiver on 127.0.0.1 and register it for ${EVENTS.join(", ")}`);
  const receiver = await Receiver.start(options.receiverPort);
  let webhookId: number | null = null;
  try {
    say(`receiver listening at ${receiver.url}`);
    const answer = await client.POST("/api/v1/webhooks", {
      params: { header: { "Idempotency-Key": newKey() } },
      body: { url: receiver.url, events: [...EVENTS], description: `examples/typescript ${stamp}` },
    });
    if (answer.error?.error.code === "webhook_url_not_allowed") {
      say(
        "the server refuses 127.0.0.1: start it (and its queue worker) with " +
          "ONCORE_WEBHOOK_ALLOW_NETWORKS=127.0.0.1/32 (see docs/api.md, TypeScript)",
      );
    }
    const webhook = ok(answer, 201);
    webhookId = webhook.id;
    if (webhook.secret === null) throw new Stop("the webhook's secret was withheld (a replayed request).");
    receiver.setSecret(webhook.secret);
    say(
      `POST /webhooks: webhook ${webhook.id}, events ${JSON.stringify(webhook.events)}, enabled ${webhook.enabled}, ` +
        `secret ${webhook.secret.slice(0, 10)}… (shown once; the receiver checks signatures with it)`,
    );
    await bankFlagResults(client, receiver, webhook.id, line, spec, options, stamp);
  } finally {
    await receiver.stop();
    if (webhookId !== null) {
      const gone = await client.DELETE("/api/v1/webhooks/{webhook_id}", {
        params: { path: { webhook_id: webhookId } },
      });
      say(`DELETE /webhooks/${webhookId}: HTTP ${gone.response.status} (its receiver stopped with the walk)`);
    }
  }
  say(`done in ${Math.round((Date.now() - started) / 1000)} s`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      url: { type: "string", default: process.env.ONCORE_URL ?? "http://127.0.0.1:8000" },
      key: { type: "string", default: process.env.ONCORE_API_KEY ?? "" },
      wait: { type: "string", default: "1200" },
      "leader-wait": { type: "string", default: "90" },
      "receiver-port": { type: "string", default: "0" },
    },
  });
  if (!values.key) {
    console.error("give an organization API key: --key or ONCORE_API_KEY (docs/api.md, TypeScript)");
    return 2;
  }
  const url = values.url.replace(/\/+$/, "");
  console.log(`OnCore API walkthrough (TypeScript) against ${url}`);
  try {
    await walkthrough(url, values.key, {
      wait: Number(values.wait),
      leaderWait: Number(values["leader-wait"]),
      receiverPort: Number(values["receiver-port"]),
    });
  } catch (error) {
    if (error instanceof Stop) {
      console.log(`\nSTOPPED: ${error.message}`);
      return 1;
    }
    throw error;
  }
  return 0;
}

process.exitCode = await main();
