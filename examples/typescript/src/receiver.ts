// A webhook endpoint on 127.0.0.1: it answers 200 at once to a delivery whose signature verifies (400
// otherwise) and hands each verified event, each id once, to whoever waits for it. The events are typed from
// the schema's `webhooks` section: one payload type per event, told apart by `type`.

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import type { webhooks } from "../generated/schema.js";
import { verify } from "./signature.js";

type EventName = keyof webhooks;
/** The body OnCore POSTs for one event type, as the schema's `webhooks` declares it. */
export type EventOf<K extends EventName> = webhooks[K]["post"]["requestBody"]["content"]["application/json"];
/** Any event: a union on `type`, so `if (event.type === "flag.scored")` narrows `event.data`. */
export type WebhookEvent = { [K in EventName]: EventOf<K> }[EventName];

const EVENT_TYPES: readonly string[] = [
  "flag.scored",
  "bank.leader_changed",
  "run.finished",
  "run.judge_failed",
] satisfies readonly EventName[];

/** The one place an unchecked value becomes typed: a body whose signature verified, of a known event type. */
function isEvent(value: unknown): value is WebhookEvent {
  if (typeof value !== "object" || value === null) return false;
  if (!("id" in value && "type" in value && "created_at" in value && "data" in value)) return false;
  return (
    typeof value.id === "string" &&
    typeof value.type === "string" &&
    EVENT_TYPES.includes(value.type) &&
    typeof value.created_at === "string" &&
    typeof value.data === "object" &&
    value.data !== null
  );
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export class Receiver {
  static readonly path = "/oncore-events";
  readonly seen = new Set<string>();
  /** Every verified event so far, in the order received (a wait may find one that came during an earlier wait). */
  readonly received: WebhookEvent[] = [];
  refused = 0;
  private secret: string | null = null;
  private readonly secretWaiters: Array<() => void> = [];
  private readonly queue: WebhookEvent[] = [];
  private readonly eventWaiters: Array<() => void> = [];
  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(port = 0): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server);
    server.on("request", (request, response) => {
      void receiver.handle(request).then((status) => {
        response.writeHead(status, { "Content-Type": "application/json", "Content-Length": "2" });
        response.end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return receiver;
  }

  get url(): string {
    const address: AddressInfo | string | null = this.server.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    return `http://127.0.0.1:${port}${Receiver.path}`;
  }

  setSecret(secret: string): void {
    this.secret = secret;
    for (const wake of this.secretWaiters.splice(0)) wake();
  }

  private async secretWithin(ms: number): Promise<string | null> {
    if (this.secret === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.secretWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.secret;
  }

  private async handle(request: IncomingMessage): Promise<number> {
    const body = await readBody(request);
    if (request.method !== "POST" || request.url !== Receiver.path) return 404;
    // A delivery may come before the endpoint's answer reached us: wait a moment for its secret.
    const secret = await this.secretWithin(10_000);
    const header = request.headers["oncore-signature"];
    if (secret === null || typeof header !== "string" || !verify(secret, header, body)) {
      this.refused += 1;
      console.log(`    receiver: refused a delivery whose signature did not verify (${String(header).slice(0, 40)})`);
      return 400;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString("utf8"));
    } catch {
      return 400;
    }
    if (!isEvent(parsed)) return 400;
    // An event may come twice (a retry, "send again"): handle each id once.
    if (!this.seen.has(parsed.id)) {
      this.seen.add(parsed.id);
      this.received.push(parsed);
      this.queue.push(parsed);
      for (const wake of this.eventWaiters.splice(0)) wake();
    }
    return 200;
  }

  /** The next verified event, or null after `ms`. */
  async next(ms: number): Promise<WebhookEvent | null> {
    const waiting = this.queue.shift();
    if (waiting !== undefined) return waiting;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.eventWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.queue.shift() ?? null;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
