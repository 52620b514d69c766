/**
 * End-to-end encryption of tunnelled requests (`tunnel.e2e`): the client seals each request to
 * the daemon's X25519 public key (a fresh ephemeral key per request, HKDF, AES-256-GCM); the
 * daemon opens it and seals the answer with the response key. The tunnel host forwards
 * `POST /t/<id>/` bodies it cannot read. A stale timestamp or a reused ephemeral key (a replayed
 * request) is refused.
 */
import { concat, fromUtf8, utf8, type Bytes } from "./bytes.js";
import { aeadKey, dh, generateKeyPair, hkdf, open, seal, type KeyPair } from "./primitives.js";
import type { RemoteRequest, RemoteResponse } from "./channel.js";

export const E2E_CONTENT_TYPE = "application/x-svc-e2e";
export const E2E_WINDOW_MS = 5 * 60_000;
const REQ_AAD = utf8("svc-tunnel-e2e/1 request");
const RES_AAD = utf8("svc-tunnel-e2e/1 response");

async function keys(shared: Bytes, ephemeral: Bytes, daemon: Bytes) {
  const okm = await hkdf(shared, concat(ephemeral, daemon), "svc-tunnel-e2e/1", 64);
  return { req: await aeadKey(okm.slice(0, 32)), res: await aeadKey(okm.slice(32)) };
}

export class E2eError extends Error {}

/** The daemon has no room to remember another request's key: it refuses rather than forget one. */
export class E2eBusyError extends E2eError {}

/** Client side: the sealed body to POST, and how to open the answer. */
export async function sealRequest(
  daemonKey: Bytes,
  r: RemoteRequest,
  now: number,
): Promise<{ body: Bytes; openResponse(b: Bytes): Promise<RemoteResponse> }> {
  const e = await generateKeyPair();
  const k = await keys(await dh(e.privateKey, daemonKey), e.publicKey, daemonKey);
  const ct = await seal(k.req, 0, REQ_AAD, utf8(JSON.stringify({ ...r, ts: now })));
  return {
    body: concat(Uint8Array.of(1), e.publicKey, ct),
    async openResponse(b) {
      const plain = await open(k.res, 0, RES_AAD, b);
      if (!plain)
        throw new E2eError(
          "the tunnel's answer did not authenticate (not from the daemon holding this key, or altered)",
        );
      return JSON.parse(fromUtf8(plain)) as RemoteResponse;
    },
  };
}

/**
 * Daemon side: opens a sealed request. `seen` remembers ephemeral keys (with the request's
 * timestamp, so it can forget a key once a replay would be stale) to refuse replays.
 */
export async function openRequest(
  identity: KeyPair,
  body: Bytes,
  now: number,
  seen: { claim(key: string, ts: number, now: number): "new" | "replay" | "full" },
): Promise<{ request: RemoteRequest; sealResponse(r: RemoteResponse): Promise<Bytes> }> {
  if (body.length < 33 + 16 || body[0] !== 1) throw new E2eError("not an end-to-end sealed request");
  const ephemeral = body.slice(1, 33);
  const k = await keys(await dh(identity.privateKey, ephemeral), ephemeral, identity.publicKey);
  const plain = await open(k.req, 0, REQ_AAD, body.slice(33));
  if (!plain) throw new E2eError("the sealed request did not open (sealed to another key, or altered)");
  const r = JSON.parse(fromUtf8(plain)) as RemoteRequest & { ts?: number };
  if (typeof r.ts !== "number" || Math.abs(now - r.ts) > E2E_WINDOW_MS)
    throw new E2eError("the sealed request is stale (more than 5 minutes from this daemon's clock)");
  const id = Array.from(ephemeral, (x) => x.toString(16).padStart(2, "0")).join("");
  const claim = seen.claim(id, r.ts, now);
  if (claim === "replay") throw new E2eError("replayed request refused");
  if (claim === "full")
    throw new E2eBusyError("too many sealed requests in the last 5 minutes to remember another: try again later");
  return {
    request: {
      method: r.method,
      path: r.path,
      ...(r.headers ? { headers: r.headers } : {}),
      ...(r.body !== undefined ? { body: r.body } : {}),
    },
    sealResponse: (res) => seal(k.res, 0, RES_AAD, utf8(JSON.stringify(res))),
  };
}
