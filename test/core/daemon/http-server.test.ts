import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SvcError } from "../../../core/errors.js";
import { DaemonHttpServer } from "../../../core/daemon/http-server.js";
import { RouteTable } from "../../../core/daemon/route-table.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { connect } from "node:net";
import { rawRequest } from "../../support/http.js";

/** The head of the answer to a request written as is (an HTTP/1.0 request may carry no Host). */
function http10(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let text = "";
    socket.on("data", (c: Buffer) => (text += c.toString("latin1")));
    socket.on("end", () => resolve(text.split("\r\n\r\n")[0]!));
    socket.on("error", reject);
  });
}

describe("DaemonHttpServer error bodies", () => {
  let server: DaemonHttpServer;
  let base: string;
  let logger: ReturnType<typeof createMemoryLogger>;
  beforeEach(async () => {
    const routes = new RouteTable();
    routes.add({
      method: "GET",
      path: "/boom",
      auth: "open",
      handler: () => {
        throw new Error("ENOENT: no such file or directory, open '/home/alice/.svc/vault/whsec_SECRET'");
      },
    });
    routes.add({
      method: "GET",
      path: "/refused",
      auth: "open",
      handler: () => {
        throw new SvcError("invalid_input", "the sentinel needs a target");
      },
    });
    logger = createMemoryLogger();
    server = new DaemonHttpServer({
      routes,
      logger,
      tokens: () => ({ boot: "boot-token" }),
      policy: () => ({ allowedOrigins: [] }),
      hosts: () => ({ bind: "127.0.0.1", allowedHosts: [] }),
    });
    base = `http://127.0.0.1:${await server.listen(0, "127.0.0.1")}`;
    server.ready();
  });
  afterEach(() => server.close());

  /** A server whose modules are not up yet (ready() not called). */
  const starting = () =>
    new DaemonHttpServer({
      routes: new RouteTable(),
      logger,
      tokens: () => ({ boot: "b" }),
      policy: () => ({ allowedOrigins: [] }),
      hosts: () => ({ bind: "127.0.0.1", allowedHosts: [] }),
    });

  it("answers 503 until the daemon's modules are up", async () => {
    const early = starting();
    const port = await early.listen(0, "127.0.0.1");
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/starting/);
    } finally {
      await early.close();
    }
  });

  it("logs no error for a probe answered 503 while the daemon starts (each used to log `request failed`)", async () => {
    const early = starting();
    const port = await early.listen(0, "127.0.0.1");
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(503);
      expect(logger.lines).toEqual([]);
    } finally {
      await early.close();
    }
  });

  it("an unexpected error is a generic 500; the original goes to the log only", async () => {
    const res = await fetch(`${base}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain("whsec_SECRET");
    expect(text).not.toContain("/home/alice");
    expect(JSON.parse(text)).toEqual({
      error: { code: "internal", message: "internal error; the daemon log has the cause" },
    });
    expect(logger.lines.some((l) => l.includes("request failed") && l.includes("ENOENT"))).toBe(true);
  });

  it("an SvcError keeps its message", async () => {
    const res = await fetch(`${base}/refused`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: "invalid_input", message: "the sentinel needs a target" } });
  });
});

describe("DaemonHttpServer: the daemon's own origin, bound beyond loopback", () => {
  let server: DaemonHttpServer;
  let port: number;
  beforeEach(async () => {
    const routes = new RouteTable();
    routes.add({ method: "POST", path: "/write", auth: "open", handler: () => ({ status: 200, body: { ok: true } }) });
    routes.add({
      method: "POST",
      path: "/needs-more",
      auth: "open",
      handler: () => {
        throw new SvcError("unauthorized", "this operation needs the token");
      },
    });
    // The server listens on loopback, as a 0.0.0.0 daemon does too; 192.0.2.10 stands for its LAN address.
    server = new DaemonHttpServer({
      routes,
      logger: createMemoryLogger(),
      tokens: () => ({ boot: "boot-token" }),
      policy: () => ({ allowedOrigins: [] }),
      hosts: () => ({ bind: "0.0.0.0", allowedHosts: ["svc.lan"], localAddresses: () => ["127.0.0.1", "192.0.2.10"] }),
    });
    port = await server.listen(0, "127.0.0.1");
    server.ready();
  });
  afterEach(() => server.close());

  it("an IP-literal Host whose Origin matches is the daemon's own; a DNS name (rebindable) is not", async () => {
    const post = (host: string) =>
      rawRequest(port, { method: "POST", path: "/write", headers: { host, origin: `http://${host}` } });
    expect((await post(`192.0.2.10:${port}`)).status).toBe(200);
    expect((await post(`127.0.0.1:${port}`)).status).toBe(200);
    const rebound = await post(`rebind.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(rebound.json().error.message).toMatch(/Host "rebind\.example" does not name this daemon/);
    // A name in daemon.allowedHosts passes the Host check, but is not own origin (daemon.allowedOrigins is).
    const allowed = await post(`svc.lan:${port}`);
    expect(allowed.status).toBe(403);
    expect(allowed.json().error.message).toMatch(/not this daemon's own origin/);
  });

  it("a 401 a handler raises after a valid token carries the challenge without error=invalid_token", async () => {
    const res = await rawRequest(port, {
      method: "POST",
      path: "/needs-more",
      headers: { host: `192.0.2.10:${port}`, authorization: "Bearer boot-token" },
    });
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toBe(
      `Bearer realm="svc", resource_metadata="http://192.0.2.10:${port}/.well-known/oauth-protected-resource"`,
    );
  });

  it("a Host that is not an authority is refused; without Host the challenge names the address the request arrived on", async () => {
    const bad = await rawRequest(port, { method: "POST", path: "/needs-more", headers: { host: "bad host" } });
    expect(bad.status).toBe(403);
    const head = await http10(port, "POST /needs-more HTTP/1.0\r\nContent-Length: 0\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 401 /);
    expect(head).toContain(
      `Bearer realm="svc", resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource"`,
    );
  });
});

describe("DaemonHttpServer: one Host rule on a wide bind, and the loopback exemption only for a loopback Host", () => {
  let server: DaemonHttpServer;
  let port: number;
  beforeEach(async () => {
    const routes = new RouteTable();
    routes.add({
      method: "GET",
      path: "/probe",
      auth: "loopback-or-token",
      handler: (req) => ({ status: 200, body: { principal: req.principal } }),
    });
    // Bound to 0.0.0.0 with daemon.authToken set; the socket is loopback, as a page's request that
    // a rebound name sent to 127.0.0.1 arrives.
    server = new DaemonHttpServer({
      routes,
      logger: createMemoryLogger(),
      tokens: () => ({ stable: "stable-token", boot: "boot-token" }),
      policy: () => ({ allowedOrigins: [] }),
      hosts: () => ({ bind: "0.0.0.0", allowedHosts: ["svc.lan"], localAddresses: () => ["127.0.0.1", "192.0.2.10"] }),
    });
    port = await server.listen(0, "127.0.0.1");
    server.ready();
  });
  afterEach(() => server.close());

  const get = (host: string, path = "/probe", token?: string) =>
    rawRequest(port, { path, headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) } });

  it("a foreign Host is refused 403 before any route: a known one, an unknown one, a preflight, with a token", async () => {
    for (const res of [
      await get(`evil.example:${port}`),
      await get(`evil.example:${port}`, "/no-such-route"),
      await get(`evil.example:${port}`, "/probe", "stable-token"),
      await rawRequest(port, { method: "OPTIONS", path: "/probe", headers: { host: `evil.example:${port}` } }),
    ]) {
      expect(res.status).toBe(403);
      if (res.body) expect(res.json().error.message).toMatch(/Host "evil\.example" does not name this daemon/);
    }
  });

  it("a loopback Host on the loopback socket keeps the exemption", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      const res = await get(host);
      expect(res.status).toBe(200);
      expect(res.json()).toEqual({ principal: "loopback" });
    }
  });

  it("this machine's LAN address or an allowed name passes the Host check but needs the token", async () => {
    for (const host of [`192.0.2.10:${port}`, `svc.lan:${port}`]) {
      const bare = await get(host);
      expect(bare.status).toBe(401);
      expect(bare.json().error.message).toMatch(/a bearer token is required/);
      const owner = await get(host, "/probe", "stable-token");
      expect(owner.status).toBe(200);
      expect(owner.json()).toEqual({ principal: "token:stable" });
    }
  });
});
