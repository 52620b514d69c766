/**
 * The tunnel host's bounds with a real relay on loopback and a raw WebSocket as the daemon:
 * requests waiting on one tunnel, a request the daemon never answers, and request bodies (one
 * over the cap is answered 413 as soon as it crosses it, not after the client finished sending).
 */
import { request } from "node:http";
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import type { RelayLimits } from "../../../core/remote/relay/limits.js";
import { startRelay, type RunningRelay } from "../../../core/remote/relay/relay-server.js";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";

const TOKEN = "bounds-token-3307";
const CALLER = callerTokenFor(TOKEN);
const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A relay and a fake daemon on its tunnel that answers nothing; `requests` counts what reached it. */
async function tunnel(
  limits: Partial<RelayLimits>,
): Promise<{ relay: RunningRelay; url: string; requests: () => number }> {
  const relay = await startRelay({ port: 0, bind: "127.0.0.1", tunnelTokens: [TOKEN], limits });
  open.push(relay);
  const ws = new WebSocket(`${relay.url}/tunnel`, { headers: { authorization: `Bearer ${TOKEN}` } });
  open.push({ close: () => ws.terminate() });
  let n = 0;
  const url = await new Promise<string>((resolve) =>
    ws.on("message", (d) => {
      const m = JSON.parse(String(d)) as { t: string; url?: string };
      if (m.t === "ready") resolve(m.url!);
      else n++;
    }),
  );
  return { relay, url, requests: () => n };
}

const get = (url: string, signal?: AbortSignal) =>
  fetch(url, { headers: { authorization: `Bearer ${CALLER}` }, ...(signal ? { signal } : {}) });

describe("tunnel host bounds", () => {
  it("answers 503 beyond the requests that may wait on one tunnel, and 504 when the daemon does not answer", async () => {
    const t = await tunnel({ maxTunnelInFlight: 2, tunnelTimeoutMs: 1500 });
    const waiting = [get(t.url + "a"), get(t.url + "b")];
    await expect.poll(t.requests).toBe(2);
    const third = await get(t.url + "c");
    expect(third.status).toBe(503);
    expect(t.requests()).toBe(2);
    for (const r of await Promise.all(waiting)) expect(r.status).toBe(504);
  });

  it("counts requests still sending their bodies toward the requests that may wait on a tunnel", async () => {
    const t = await tunnel({ maxTunnelInFlight: 2 });
    const u = new URL(t.url);
    // Two uploads that announce 1000 bytes and send 10: each holds a buffer while it waits.
    const slow = [0, 1].map(() => {
      const req = request({
        host: u.hostname,
        port: u.port,
        path: u.pathname + "slow",
        method: "POST",
        headers: { authorization: `Bearer ${CALLER}`, "content-length": "1000" },
      });
      req.on("error", () => undefined);
      req.write(Buffer.alloc(10));
      return req;
    });
    open.push({ close: () => slow.forEach((r) => r.destroy()) });
    await new Promise((r) => setTimeout(r, 300));
    const third = await get(t.url + "c", AbortSignal.timeout(5000));
    expect(third.status).toBe(503);
    expect(t.requests()).toBe(0);
    // Uploads abandoned half-way give their places back.
    for (const r of slow) r.destroy();
    await new Promise((r) => setTimeout(r, 300));
    void get(t.url + "d").catch(() => undefined);
    await expect.poll(t.requests).toBe(1);
  });

  it("answers 413 as soon as a request body crosses the cap, without waiting for the rest", async () => {
    const t = await tunnel({ maxTunnelBodyBytes: 1024 });
    const u = new URL(t.url);
    // Announces 10 MB, sends 4 KiB, then nothing: the relay must not wait for the rest.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({
        host: u.hostname,
        port: u.port,
        path: u.pathname + "upload",
        method: "POST",
        headers: { authorization: `Bearer ${CALLER}`, "content-length": String(10 * 1024 * 1024) },
      });
      req.on("response", (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.on("error", reject);
      req.write(Buffer.alloc(4096, 1));
      setTimeout(() => reject(new Error("no answer within 5 s")), 5000).unref();
    });
    expect(status).toBe(413);
    expect(t.requests()).toBe(0);
    const small = await fetch(t.url + "ok", {
      method: "POST",
      headers: { authorization: `Bearer ${CALLER}` },
      body: "x".repeat(2048),
    });
    expect(small.status).toBe(413);
  });
});
