import { createServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createEgress, MAX_BODY_BYTES, type Egress } from "../../../core/egress/egress.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import {
  failure,
  startGate,
  startReceiver,
  tableResolver,
  withEgress,
  type Receiver,
} from "../../support/https-receiver.js";

let rx: Receiver;
let rx6: Receiver;
let egress: Egress;
let closeGate: () => Promise<void>;
const resolver = tableResolver({
  "receiver.test": ["127.0.0.1"],
  "v6.receiver.test": ["::1"],
  "wrong-name.example": ["127.0.0.1"],
  "mixed.receiver.test": ["93.184.216.34", "127.0.0.1"],
  "mixed-private.receiver.test": ["127.0.0.1", "10.0.0.1"],
  "empty.receiver.test": [],
});
const json = { "content-type": "application/json" };

beforeAll(async () => {
  ({ rx, egress, close: closeGate } = await startGate({ resolver }));
  rx6 = await startReceiver("::1");
});
afterAll(async () => {
  await closeGate();
  await rx6.close();
});
beforeEach(() => {
  rx.seen.length = 0;
  resolver.calls.length = 0;
  rx.handle((_req, res) => res.writeHead(200, json).end('{"ok":true}'));
});

const url = (path = "/hook", host = "receiver.test") => `https://${host}:${rx.port}${path}`;
const post = (
  u: string,
  body: string | Buffer = '{"a":1}',
  timeoutMs = 5_000,
  headers: Record<string, string> = json,
) => egress.post(u, { headers, body, timeoutMs });

describe("egress: connecting to the validated address under the original name", () => {
  it("keeps the hostname for SNI, certificate verification and Host (non-default port kept)", async () => {
    const res = await post(url("/hook?x=1"), '{"a":1}', 5_000, { ...json, host: "evil.example", "x-extra": "1" });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{"ok":true}');
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.truncated).toBe(false);
    const seen = rx.seen[0]!;
    expect(seen).toMatchObject({ method: "POST", path: "/hook?x=1", servername: "receiver.test" });
    expect(seen.headers.host).toBe(`receiver.test:${rx.port}`);
    expect(seen.headers["x-extra"]).toBe("1");
    expect(seen.body.toString()).toBe('{"a":1}');
    expect(resolver.calls).toEqual(["receiver.test"]);
  });

  it("verifies the certificate against the URL's hostname, not the address it connects to", async () => {
    const err = await failure(post(url("/hook", "wrong-name.example")));
    expect(err.code).toBe("tls_untrusted");
    expect(err.message).toContain("wrong-name.example");
    expect(err.message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(rx.seen).toHaveLength(0);
  });

  it("reaches an IPv6 receiver through an AAAA answer and through an IP literal", async () => {
    rx6.handle((_req, res) => res.writeHead(204).end());
    expect((await post(`https://v6.receiver.test:${rx6.port}/`)).status).toBe(204);
    expect((await post(`https://[::1]:${rx6.port}/`)).status).toBe(204);
    expect(rx6.seen.map((s) => s.headers.host)).toEqual([`v6.receiver.test:${rx6.port}`, `[::1]:${rx6.port}`]);
  });

  it("resolves again on every request (each answer validated) and reuses connections", async () => {
    for (let i = 0; i < 3; i++) await post(url());
    expect(resolver.calls).toEqual(["receiver.test", "receiver.test", "receiver.test"]);
    expect(rx.seen).toHaveLength(3);
    expect(new Set(rx.seen.map((s) => s.remotePort)).size).toBeLessThan(3);
  });
});

describe("egress: the gate refuses before sending", () => {
  it("refuses non-https URLs without resolving", async () => {
    for (const u of [`http://receiver.test:${rx.port}/`, "ftp://receiver.test/", "not a url"]) {
      expect((await failure(post(u))).code).toBe("non_https");
    }
    expect(resolver.calls).toHaveLength(0);
  });

  it("refuses a loopback receiver when webhooks.allowSubnets does not exempt it", async () => {
    await withEgress({ resolver }, async (strict) => {
      const err = await failure(
        strict.post(url("/secret-path?token=abc"), { headers: json, body: "{}", timeoutMs: 5_000 }),
      );
      expect(err.code).toBe("private_target");
      expect(err.message).toContain(`receiver.test:${rx.port}`);
      expect(err.message).toContain("127.0.0.0/8");
      expect(err.message).not.toMatch(/secret-path|token=abc/);
      expect(
        (await failure(strict.post(`https://127.0.0.1:${rx.port}/`, { headers: json, body: "{}", timeoutMs: 5_000 })))
          .code,
      ).toBe("private_target");
    });
    expect(rx.seen).toHaveLength(0);
  });

  it("blocks a hostname with one public and one private answer", async () => {
    await withEgress({ resolver }, async (strict) => {
      const err = await failure(
        strict.post(url("/", "mixed.receiver.test"), { headers: json, body: "{}", timeoutMs: 5_000 }),
      );
      expect(err.code).toBe("private_target");
      expect(err.message).toContain("127.0.0.1");
    });
    expect((await failure(post(url("/", "mixed-private.receiver.test")))).code).toBe("private_target");
    expect(rx.seen).toHaveLength(0);
  });

  it("fails `connect` when the name does not resolve or has no answer", async () => {
    expect((await failure(post(url("/", "nxdomain.receiver.test")))).code).toBe("connect");
    expect((await failure(post(url("/", "empty.receiver.test")))).code).toBe("connect");
  });

  it("refuses a request body over 256 KiB before sending and sends exactly 256 KiB", async () => {
    expect((await failure(post(url(), Buffer.alloc(MAX_BODY_BYTES + 1)))).code).toBe("payload_too_large");
    expect(rx.seen).toHaveLength(0);
    await post(url(), Buffer.alloc(MAX_BODY_BYTES, 0x61));
    expect(rx.seen[0]!.body.length).toBe(MAX_BODY_BYTES);
  });
});

describe("egress: redirects are never followed", () => {
  it("fails `redirect` for a 301 to http", async () => {
    rx.handle((_req, res) => res.writeHead(301, { location: `http://receiver.test:${rx.port}/plain` }).end());
    const err = await failure(post(url()));
    expect(err.code).toBe("redirect");
    expect(err.message).not.toContain("/plain");
    expect(rx.seen).toHaveLength(1);
  });

  it("returns a 302 to https as is, and a relative Location too", async () => {
    rx.handle((_req, res) =>
      res.writeHead(302, { location: `https://receiver.test:${rx.port}/elsewhere` }).end("moved"),
    );
    const res = await post(url());
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`https://receiver.test:${rx.port}/elsewhere`);
    expect(res.body.toString()).toBe("moved");
    rx.handle((_req, res2) => res2.writeHead(307, { location: "/next" }).end());
    expect((await post(url())).status).toBe(307);
    expect(rx.seen.map((s) => s.path)).toEqual(["/hook", "/hook"]);
  });

  it("fails `redirect` for a Location that does not parse", async () => {
    rx.handle((_req, res) => res.writeHead(308, { location: "http://[bad" }).end());
    expect((await failure(post(url()))).code).toBe("redirect");
  });
});

describe("egress: failures of the receiver", () => {
  it("maps a reset before the response to `connect`", async () => {
    rx.handle((_req, res) => res.socket?.destroy());
    const err = await failure(post(url("/p?q=secret")));
    expect(err.code).toBe("connect");
    expect(err.message).not.toContain("secret");
  });

  it("maps a reset in the middle of the response body to `connect`", async () => {
    rx.handle((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write("x".repeat(100), () => setTimeout(() => res.socket?.destroy(), 20));
    });
    expect((await failure(post(url()))).code).toBe("connect");
  });

  it("maps a refused connection to `connect`", async () => {
    const gone = await startReceiver();
    const port = gone.port;
    await gone.close();
    expect((await failure(post(`https://receiver.test:${port}/`))).code).toBe("connect");
  });

  it("times out a receiver that never answers, and one that stalls mid-body", async () => {
    rx.handle(() => undefined);
    const err = await failure(post(url(), "{}", 200));
    expect(err.code).toBe("timeout");
    expect(err.message).toContain(`receiver.test:${rx.port}`);
    rx.handle((_req, res) => {
      res.writeHead(200, { "content-length": "10" });
      res.write("12345");
    });
    expect((await failure(post(url(), "{}", 200))).code).toBe("timeout");
  });

  it("times out a receiver that accepts the connection but never completes the TLS handshake", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket.on("error", () => undefined)));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const err = await failure(post(`https://receiver.test:${(silent.address() as AddressInfo).port}/`, "{}", 300));
      expect(err.code).toBe("timeout");
      // At the attempt's deadline, not at the connect timeout of the dispatcher (15 s), which
      // says "did not answer in time (UND_ERR_CONNECT_TIMEOUT)": the message names the deadline.
      expect(err.message).toBe(`receiver.test:${(silent.address() as AddressInfo).port} did not answer within 300 ms`);
    } finally {
      sockets.forEach((s) => s.destroy());
      await new Promise((r) => silent.close(r));
    }
  });

  it("times out a resolver that never answers", async () => {
    await withEgress({ resolver: { lookupAll: () => new Promise(() => undefined) } }, async (stuck) => {
      expect((await failure(stuck.post(url(), { headers: json, body: "{}", timeoutMs: 100 }))).code).toBe("timeout");
    });
  });

  it("clamps a 2 MB response body to 256 KiB", async () => {
    rx.handle((_req, res) => res.writeHead(200).end(Buffer.alloc(2 * 1024 * 1024, 0x62)));
    const res = await post(url());
    expect(res.body.length).toBe(MAX_BODY_BYTES);
    expect(res.truncated).toBe(true);
  });

  it("returns at the clamp from a response body that never ends", async () => {
    rx.handle((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 0x63);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      res.on("error", () => undefined);
      pump();
    });
    const res = await post(url(), "{}", 5_000);
    expect(res.body.length).toBe(MAX_BODY_BYTES);
    expect(res.truncated).toBe(true);
  });

  it("returns non-2xx statuses as they are", async () => {
    rx.handle((_req, res) => res.writeHead(500).end("boom"));
    const res = await post(url());
    expect(res.status).toBe(500);
    expect(res.body.toString()).toBe("boom");
  });
});

describe("egress: webhooks.allowSubnets", () => {
  it("warns at creation while the list is non-empty, and ignores entries that are not CIDR ranges", async () => {
    const quiet = createMemoryLogger();
    await createEgress({ allowSubnets: [], logger: quiet }).close();
    expect(quiet.lines).toHaveLength(0);
    const logger = createMemoryLogger();
    await withEgress({ allowSubnets: ["127.0.0.0/8", "zz::/64"], resolver, logger }, async (e) => {
      expect(logger.lines.map((l) => JSON.parse(l))).toMatchObject([
        { level: "warn", msg: expect.stringContaining("127.0.0.0/8") },
        { level: "warn", msg: expect.stringContaining('"zz::/64"') },
      ]);
      expect((await e.post(url(), { headers: json, body: "{}", timeoutMs: 5_000 })).status).toBe(200);
    });
  });

  it("exempts an IPv4-mapped answer through its embedded IPv4's subnet, and never relaxes https", async () => {
    await withEgress(
      { allowSubnets: ["127.0.0.0/8"], resolver: tableResolver({ "mapped.receiver.test": ["::ffff:127.0.0.1"] }) },
      async (e) => {
        const u = `https://mapped.receiver.test:${rx.port}/`;
        expect((await e.post(u, { headers: json, body: "{}", timeoutMs: 5_000 })).status).toBe(200);
        expect(
          (await failure(e.post(`http://127.0.0.1:${rx.port}/`, { headers: json, body: "{}", timeoutMs: 5_000 }))).code,
        ).toBe("non_https");
      },
    );
  });
});

describe("egress: no second lookup, no rebinding window", () => {
  it("connects to the validated address, not to what the system resolver would answer", async () => {
    const rx2 = await startReceiver("127.0.0.2");
    const e = createEgress({ allowSubnets: ["127.0.0.2/32"], resolver: tableResolver({ localhost: ["127.0.0.2"] }) });
    try {
      expect(
        (await e.post(`https://localhost:${rx2.port}/`, { headers: json, body: "{}", timeoutMs: 5_000 })).status,
      ).toBe(200);
      expect(rx2.seen[0]).toMatchObject({ localAddress: "127.0.0.2", servername: "localhost" });
      expect(rx2.seen[0]!.headers.host).toBe(`localhost:${rx2.port}`);
    } finally {
      await e.close();
      await rx2.close();
    }
  });

  it("re-validates on every request: a name that turns private is refused even with a kept-alive connection", async () => {
    const answers = [["127.0.0.1"], ["127.0.0.9"]];
    const flipping = { lookupAll: async () => answers.shift()!.map((address) => ({ address, family: 4 as const })) };
    await withEgress({ allowSubnets: ["127.0.0.1/32"], resolver: flipping }, async (e) => {
      expect((await e.post(url(), { headers: json, body: "{}", timeoutMs: 5_000 })).status).toBe(200);
      expect((await failure(e.post(url(), { headers: json, body: "{}", timeoutMs: 5_000 }))).code).toBe(
        "private_target",
      );
      expect(rx.seen).toHaveLength(1);
    });
  });

  it("refuses a URL carrying credentials (the one callback URL rule) and never sends the fragment", async () => {
    await expect(post(`https://user:pass@receiver.test:${rx.port}/hook`)).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringMatching(/must not carry credentials/),
    });
    expect(rx.seen).toHaveLength(0);
    await post(`https://receiver.test:${rx.port}/hook#frag`);
    expect(rx.seen[0]!.path).toBe("/hook");
  });
});

describe("egress: certificate verification uses Node's normal trust store", () => {
  let untrusted: { key: Buffer; cert: Buffer } | undefined;
  beforeAll(async () => {
    const { execFileSync } = await import("node:child_process");
    const { mkdtempSync, readFileSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "svc-untrusted-"));
    try {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-days",
          "1",
          "-subj",
          "/CN=receiver.test",
          "-addext",
          "subjectAltName=DNS:receiver.test",
          "-keyout",
          join(dir, "k.pem"),
          "-out",
          join(dir, "c.pem"),
        ],
        { stdio: "ignore" },
      );
      untrusted = { key: readFileSync(join(dir, "k.pem")), cert: readFileSync(join(dir, "c.pem")) };
    } catch {
      untrusted = undefined;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a self-signed certificate that no trusted CA signed (`tls_untrusted`)", async (ctx) => {
    if (!untrusted) return ctx.skip();
    const bad = await startReceiver("127.0.0.1", untrusted);
    try {
      const err = await failure(post(`https://receiver.test:${bad.port}/`));
      expect(err.code).toBe("tls_untrusted");
      expect(err.message).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
      expect(bad.seen).toHaveLength(0);
    } finally {
      await bad.close();
    }
  });
});
