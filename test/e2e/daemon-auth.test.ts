import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { rawRequest } from "../support/http.js";

const XFF = { "x-forwarded-for": "203.0.113.7" };

async function daemonWith(config: unknown, args: string[] = []) {
  const t = await makeTempHome();
  if (config !== undefined) await writeFile(join(t.home, "config.json"), JSON.stringify(config));
  const d = await startDaemonProcess({ home: t.home, args });
  return { d, cleanup: async () => (await d.kill9(), await t.cleanup()) };
}

describe("bearer authentication (SPEC.md Authentication 2)", () => {
  describe("with no daemon.authToken", () => {
    let d: DaemonProcess;
    let done: () => Promise<void>;
    beforeAll(async () => ({ d, cleanup: done } = await daemonWith(undefined)));
    afterAll(() => done());

    it("leaves loopback-or-token routes open to forwarded callers for reading only", async () => {
      expect((await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick" })).status).toBe(200);
      expect((await rawRequest(d.port, { method: "GET", path: "/sessions", headers: XFF })).status).toBe(200);
      const tick = await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: XFF });
      expect(tick.status).toBe(403);
      expect(tick.json()).toMatchObject({ error: { code: "forbidden", message: expect.stringContaining("a caller beyond loopback without a bearer token may only read") } });
    });

    it("refuses a wrong token even where none is needed", async () => {
      const res = await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: { authorization: "Bearer nope" } });
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    });
  });

  describe("with daemon.authToken set", () => {
    let d: DaemonProcess;
    let done: () => Promise<void>;
    beforeAll(async () => ({ d, cleanup: done } = await daemonWith({ daemon: { authToken: "stable-token-123" } })));
    afterAll(() => done());

    it("exempts loopback callers without X-Forwarded-For", async () => {
      expect((await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick" })).status).toBe(200);
    });

    it("requires a token from forwarded callers and accepts the stable and the per-boot token", async () => {
      expect((await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: XFF })).status).toBe(401);
      for (const tok of ["stable-token-123", d.token]) {
        const res = await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: { ...XFF, authorization: `Bearer ${tok}` } });
        expect(res.status).toBe(200);
      }
    });

    it("never echoes the token in an error", async () => {
      const res = await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: { ...XFF, authorization: "Bearer stable-token-12" } });
      expect(res.status).toBe(401);
      expect(res.body).not.toContain("stable-token");
    });
  });

  it("--auth-token overrides daemon.authToken", async () => {
    const { d, cleanup } = await daemonWith({ daemon: { authToken: "from-config" } }, ["--auth-token", "from-flag"]);
    try {
      const call = (tok: string) => rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: { ...XFF, authorization: `Bearer ${tok}` } });
      expect((await call("from-flag")).status).toBe(200);
      expect((await call("from-config")).status).toBe(401);
    } finally {
      await cleanup();
    }
  });
});

describe("browser guards", () => {
  let d: DaemonProcess;
  let done: () => Promise<void>;
  beforeAll(async () => ({ d, cleanup: done } = await daemonWith({ daemon: { allowedOrigins: ["http://app.example:3000"] } })));
  afterAll(() => done());

  it("answers a preflight only for an allowed origin", async () => {
    const ok = await rawRequest(d.port, {
      method: "OPTIONS",
      path: "/heartbeat/tick",
      headers: { origin: "http://app.example:3000", "access-control-request-method": "POST", "access-control-request-headers": "authorization" },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers["access-control-allow-origin"]).toBe("http://app.example:3000");
    const bad = await rawRequest(d.port, { method: "OPTIONS", path: "/heartbeat/tick", headers: { origin: "http://evil.example" } });
    expect(bad.status).toBe(403);
    expect(bad.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("refuses a state-changing request from any other origin, even from loopback", async () => {
    const res = await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: { origin: "http://evil.example", "content-type": "text/plain" } });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe("forbidden");
  });

  it("serves an allowed origin with CORS headers", async () => {
    const res = await rawRequest(d.port, { method: "POST", path: "/heartbeat/tick", headers: { origin: "http://app.example:3000" } });
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe("http://app.example:3000");
  });

  it("gives no CORS headers to other origins on reads", async () => {
    const res = await rawRequest(d.port, { path: "/health", headers: { origin: "http://evil.example" } });
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("refuses a Host that is not a loopback name (DNS rebinding)", async () => {
    const res = await rawRequest(d.port, { path: "/health", headers: { host: `rebind.example:${d.port}` } });
    expect(res.status).toBe(403);
  });

  it("answers unknown routes 404 and wrong methods 405 with the error body", async () => {
    const nf = await rawRequest(d.port, { path: "/nope" });
    expect(nf.status).toBe(404);
    expect(nf.json().error.code).toBe("not_found");
    const na = await rawRequest(d.port, { method: "DELETE", path: "/health" });
    expect(na.status).toBe(405);
  });
});
