/**
 * A Standard Webhooks receiver for the webhook e2e tests: real HTTPS on loopback (test CA), echoes
 * verification challenges, verifies every delivery with the `standardwebhooks` package against the
 * secrets it knows, and records what it saw. `respond` decides each delivery's answer.
 */
import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { Webhook } from "standardwebhooks";
import { startReceiver, type Receiver, type SeenRequest } from "./https-receiver.js";

export interface Delivery {
  id: string;
  /** The request's path and query, as the daemon sent them. */
  path: string;
  sha: string;
  body: string;
  /** Indexes (into `secrets`) of the secrets whose signature verified. */
  verifiedBy: number[];
  signatures: number;
  subscriptionId: string;
}

export interface WebhookReceiver {
  url: string;
  /** `url` as listings show it: its query values redacted (core/redaction/url.ts). */
  listedUrl: string;
  port: number;
  secrets: string[];
  deliveries: Delivery[];
  unverified: SeenRequest[];
  challenges: number;
  /** The X-MCP-Subscription-Id of each challenge, in order. */
  challengeIds: string[];
  respond: (d: Delivery, res: ServerResponse) => void;
  wrongEcho: boolean;
  /** Answer a challenge only when its signature verifies with one of `secrets` (else 401), as a careful receiver does. */
  verifyChallenges: boolean;
  close(): Promise<void>;
}

export async function startWebhookReceiver(secrets: string[]): Promise<WebhookReceiver> {
  const rx: Receiver = await startReceiver();
  const state: WebhookReceiver = {
    url: `https://127.0.0.1:${rx.port}/hooks/svc?key=private-query`,
    listedUrl: `https://127.0.0.1:${rx.port}/hooks/svc?key=REDACTED`,
    port: rx.port,
    secrets,
    deliveries: [],
    unverified: [],
    challenges: 0,
    challengeIds: [],
    respond: (_d, res) => res.writeHead(200).end("ok"),
    wrongEcho: false,
    verifyChallenges: false,
    close: () => rx.close(),
  };
  rx.handle((req, res) => {
    const text = req.body.toString("utf8");
    const headers = req.headers as Record<string, string>;
    const verifiedBy = state.secrets.flatMap((s, i) => {
      try {
        new Webhook(s).verify(text, headers);
        return [i];
      } catch {
        return [];
      }
    });
    if (text.includes('"type":"verification"')) {
      state.challenges++;
      state.challengeIds.push(headers["x-mcp-subscription-id"]!);
      if (state.verifyChallenges && verifiedBy.length === 0) {
        res.writeHead(401).end("challenge signature did not verify");
        return;
      }
      const { challenge } = JSON.parse(text) as { challenge: string };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ challenge: state.wrongEcho ? "0".repeat(64) : challenge }));
      return;
    }
    if (verifiedBy.length === 0) {
      state.unverified.push(req);
      res.writeHead(400).end("bad signature");
      return;
    }
    const d: Delivery = {
      id: headers["webhook-id"]!,
      path: req.path,
      sha: createHash("sha256").update(req.body).digest("hex"),
      body: text,
      verifiedBy,
      signatures: String(headers["webhook-signature"]).split(" ").length,
      subscriptionId: headers["x-mcp-subscription-id"]!,
    };
    state.deliveries.push(d);
    state.respond(d, res);
  });
  return state;
}

export const LOOPBACK_CONFIG = { webhooks: { allowSubnets: ["127.0.0.0/8", "::1/128"] } };

/** Polls `fn` until it returns a value (not undefined or false); the deadline only guards against a hang. */
export async function until<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
