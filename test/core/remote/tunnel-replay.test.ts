/**
 * The end-to-end tunnel's replay cache, through a real relay on loopback: a sealed request's
 * ephemeral key is remembered until a replay of it would be stale anyway (its timestamp outside
 * the freshness window), never forgotten earlier; when the cache is full of keys still fresh,
 * new sealed requests are refused rather than old keys forgotten.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startRelay, type RunningRelay } from "../../../core/remote/relay/relay-server.js";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { TunnelClient } from "../../../core/remote/tunnel/tunnel-client.js";
import { fingerprintOf } from "../../../core/remote/web/offer.js";
import { generateKeyPair } from "../../../core/remote/web/primitives.js";
import { E2E_CONTENT_TYPE, E2E_WINDOW_MS, sealRequest } from "../../../core/remote/web/tunnel-e2e.js";

const TOKEN = "replay-cache-token-6021";
const CALLER = callerTokenFor(TOKEN);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function sealedTunnel(replayCacheMax: number) {
  let clock = Date.now();
  const relay: RunningRelay = await startRelay({ port: 0, bind: "127.0.0.1", tunnelTokens: [TOKEN] });
  cleanups.push(() => relay.close());
  const key = await generateKeyPair();
  let publicUrl: string | undefined;
  const client = new TunnelClient({
    url: `${relay.url}/tunnel`,
    token: TOKEN,
    e2e: true,
    identity: { key, fingerprint: await fingerprintOf(key.publicKey) },
    forward: {
      plain: async (r) => ({ status: 200, body: `served ${r.path}` }),
      sealed: async (r) => ({ status: 200, body: `served ${r.path}` }),
    },
    log: () => undefined,
    events: { emit: (_type: string, p: { url: string }) => void (publicUrl = p.url) } as never,
    now: () => clock,
    replayCacheMax,
  });
  client.start();
  cleanups.push(() => client.stop());
  const end = Date.now() + 60_000;
  while (!publicUrl && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  if (!publicUrl) throw new Error("the tunnel did not open");
  const url = publicUrl;
  const post = (body: Uint8Array) =>
    fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${CALLER}`, "content-type": E2E_CONTENT_TYPE },
      body,
    });
  return {
    advance: (ms: number) => void (clock += ms),
    seal: async (path: string) => (await sealRequest(key.publicKey, { method: "GET", path }, clock)).body,
    post,
  };
}

describe("the end-to-end tunnel's replay cache", () => {
  it("never forgets a key while a replay would still be fresh: a full cache refuses new requests instead", async () => {
    const t = await sealedTunnel(3);
    const first = await t.seal("/one");
    for (const body of [first, await t.seal("/two"), await t.seal("/three")])
      expect((await t.post(body)).status).toBe(200);
    // The cache holds three fresh keys: a fourth request cannot be remembered, so it is refused.
    const fourth = await t.post(await t.seal("/four"));
    expect(fourth.status).toBe(503);
    expect(await fourth.text()).toMatch(/too many sealed requests/);
    // And the first key is still remembered: its replay is refused as a replay.
    const replay = await t.post(first);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("replayed request refused");
  });

  it("forgets a key once a replay of it is stale, and refuses that replay as stale", async () => {
    const t = await sealedTunnel(3);
    const old = [await t.seal("/a"), await t.seal("/b"), await t.seal("/c")];
    for (const body of old) expect((await t.post(body)).status).toBe(200);
    t.advance(E2E_WINDOW_MS + 1_000);
    // The old keys left the cache (a replay of them is stale anyway): room for new requests.
    for (const p of ["/d", "/e", "/f"]) expect((await t.post(await t.seal(p))).status).toBe(200);
    const replay = await t.post(old[0]!);
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("stale");
  });
});
