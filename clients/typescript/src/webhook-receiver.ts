// A receiver of Levy's webhook deliveries (docs/events.md): a plain Node HTTP
// server that verifies each delivery's Standard Webhooks signature with the
// `standardwebhooks` package before trusting anything in it, answers 2xx to
// what it accepts (Levy retries anything else), and skips an event it has
// already handled (deliveries are at least once: a retry or a replay sends the
// same `webhook-id` again).
//
// It prints one JSON line on stdout per request (tests/test_typescript_webhook.py
// reads them): {"listening": port} once, then {"verified": true, "id", "type",
// "object_id", "duplicate"} or {"verified": false, "error"}.
//
//   LEVY_WEBHOOK_SECRET=whsec_... PORT=8787 node dist/webhook-receiver.js
import { createServer, IncomingMessage, ServerResponse } from "node:http";
import { AddressInfo } from "node:net";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** What Levy sends (the body of `GET /events/{id}`). */
interface LevyEvent {
  id: string;
  type: string;
  created_at: string;
  object_type: string;
  object_id: string;
  data: Record<string, unknown>;
}

const MAX_BODY = 1_048_576; // Levy's events are a few kB; refuse anything far larger

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

function report(line: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(line) + "\n");
}

/** The raw body, as received: the signature covers these bytes, not a re-serialized JSON. */
function rawBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The three `webhook-*` headers (Node lower-cases header names). */
function signatureHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
    const value = req.headers[name];
    if (typeof value === "string") out[name] = value;
  }
  return out;
}

function main(): void {
  const webhook = new Webhook(env("LEVY_WEBHOOK_SECRET")); // the `whsec_...` shown once by Levy
  const seen = new Set<string>(); // a real receiver keeps these in its database

  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    let event: LevyEvent;
    try {
      const body = await rawBody(req);
      // Checks the signature and that the timestamp is within five minutes (no replays of old captures).
      event = webhook.verify(body, signatureHeaders(req)) as LevyEvent;
    } catch (e) {
      const error = e instanceof WebhookVerificationError ? e.message : String(e);
      report({ verified: false, error });
      res.writeHead(400, { "content-type": "text/plain" }).end("signature not verified");
      return;
    }
    const duplicate = seen.has(event.id);
    seen.add(event.id);
    // Here a real receiver acts on the event once (e.g. posts a finalized transaction to its ledger).
    report({ verified: true, id: event.id, type: event.type, object_id: event.object_id, duplicate });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });

  server.listen(Number(process.env.PORT ?? 8787), process.env.HOST ?? "127.0.0.1", () => {
    report({ listening: (server.address() as AddressInfo).port });
  });
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
}

main();
