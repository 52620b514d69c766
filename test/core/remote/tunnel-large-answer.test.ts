/**
 * An answer larger than the relay's tunnel body cap, with the real tunnel client and a real relay
 * on loopback: the caller gets a clear 502, never a cut body passed off as complete, and the
 * tunnel stays open (an oversized frame would make the relay drop the whole connection).
 */
import { afterEach, describe, expect, it } from "vitest";
import { startRelay } from "../../../core/remote/relay/relay-server.js";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { TunnelClient } from "../../../core/remote/tunnel/tunnel-client.js";
import { fingerprintOf } from "../../../core/remote/web/offer.js";
import { generateKeyPair } from "../../../core/remote/web/primitives.js";

const TOKEN = "large-answer-token-8080";
const CALLER = callerTokenFor(TOKEN);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("a tunnelled answer over the relay's body cap", () => {
  it("is answered 502 saying so, and the tunnel stays open", async () => {
    const relay = await startRelay({
      port: 0,
      bind: "127.0.0.1",
      tunnelTokens: [TOKEN],
      limits: { maxTunnelBodyBytes: 4096 },
    });
    cleanups.push(() => relay.close());
    const key = await generateKeyPair();
    const opened: string[] = [];
    const client = new TunnelClient({
      url: `${relay.url}/tunnel`,
      token: TOKEN,
      e2e: false,
      identity: { key, fingerprint: await fingerprintOf(key.publicKey) },
      forward: {
        plain: async (r) => ({
          status: 200,
          body: r.path === "/big" ? "x".repeat(200_000) : r.path === "/over" ? "y".repeat(5000) : "small",
        }),
        sealed: async (r) => ({
          status: 200,
          body: r.path === "/big" ? "x".repeat(200_000) : r.path === "/over" ? "y".repeat(5000) : "small",
        }),
      },
      log: () => undefined,
      events: { emit: (_t: string, p: { url: string }) => void opened.push(p.url) } as never,
      now: Date.now,
    });
    client.start();
    cleanups.push(() => client.stop());
    await expect.poll(() => opened.length).toBe(1);
    const get = (path: string) => fetch(opened[0]! + path.slice(1), { headers: { authorization: `Bearer ${CALLER}` } });
    for (const path of ["/over", "/big"]) {
      const r = await get(path);
      expect(r.status, path).toBe(502);
      expect(await r.text()).toMatch(/larger than the relay's tunnel limit \(4096 bytes\)/);
    }
    const ok = await get("/small");
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("small");
    expect(opened.length).toBe(1);
    expect(client.status.state).toBe("connected");
  });
});
