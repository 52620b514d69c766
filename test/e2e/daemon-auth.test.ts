import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { rawRequest } from "../support/http.js";
import { CLI_PATH } from "../support/paths.js";

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
      expect(tick.json()).toMatchObject({
        error: {
          code: "forbidden",
          message: expect.stringContaining("a caller beyond loopback without a bearer token may only read"),
        },
      });
    });

    it("refuses a wrong token even where none is needed", async () => {
      const res = await rawRequest(d.port, {
        method: "POST",
        path: "/heartbeat/tick",
        headers: { authorization: "Bearer nope" },
      });
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
        const res = await rawRequest(d.port, {
          method: "POST",
          path: "/heartbeat/tick",
          headers: { ...XFF, authorization: `Bearer ${tok}` },
        });
        expect(res.status).toBe(200);
      }
    });

    it("never echoes the token in an error", async () => {
      const res = await rawRequest(d.port, {
        method: "POST",
        path: "/heartbeat/tick",
        headers: { ...XFF, authorization: "Bearer stable-token-12" },
      });
      expect(res.status).toBe(401);
      expect(res.body).not.toContain("stable-token");
    });
  });

  it("--auth-token overrides daemon.authToken", async () => {
    const { d, cleanup } = await daemonWith({ daemon: { authToken: "from-config" } }, ["--auth-token", "from-flag"]);
    try {
      const call = (tok: string) =>
        rawRequest(d.port, {
          method: "POST",
          path: "/heartbeat/tick",
          headers: { ...XFF, authorization: `Bearer ${tok}` },
        });
      expect((await call("from-flag")).status).toBe(200);
      expect((await call("from-config")).status).toBe(401);
    } finally {
      await cleanup();
    }
  });
});

describe("svc serve --auth-token-file and the --auth-token warning (issue 24: no secret on argv)", () => {
  const tick = (d: DaemonProcess, tok?: string) =>
    rawRequest(d.port, {
      method: "POST",
      path: "/heartbeat/tick",
      headers: { ...XFF, ...(tok ? { authorization: `Bearer ${tok}` } : {}) },
    });

  it("--auth-token-file reads the token (trailing newline dropped) and overrides daemon.authToken; nothing warns or echoes it", async () => {
    const t = await makeTempHome();
    const token = `file-token-${randomBytes(12).toString("hex")}`;
    await writeFile(join(t.home, "config.json"), JSON.stringify({ daemon: { authToken: "from-config" } }));
    await writeFile(join(t.home, "token"), token + "\n", { mode: 0o600 });
    const d = await startDaemonProcess({ home: t.home, args: ["--auth-token-file", join(t.home, "token")] });
    try {
      expect((await tick(d)).status).toBe(401);
      expect((await tick(d, "from-config")).status).toBe(401);
      expect((await tick(d, token)).status).toBe(200);
    } finally {
      await d.stop();
      await t.cleanup();
    }
    expect(d.logs()).not.toContain(token);
    expect(d.logs()).not.toContain("warning");
  });

  it("--auth-token prints one warning line on stderr at start, naming the safe ways and never the token", async () => {
    const t = await makeTempHome();
    const token = `argv-token-${randomBytes(12).toString("hex")}`;
    const child = spawn(process.execPath, [CLI_PATH, "serve", "--port", "0", "--auth-token", token], {
      env: childEnv(t.home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (c) => (stderr += c));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      // Listening means start-up is over; then stop it, and judge everything it printed.
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (c) => {
          stdout += c;
          if (stdout.includes("svc daemon listening")) resolve();
        });
        child.on("exit", (code) => reject(new Error(`serve exited (${code}) before listening: ${stdout}${stderr}`)));
      });
      child.kill("SIGTERM");
      expect(await closed).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await closed;
      await t.cleanup();
    }
    // Besides the daemon's JSON log records, stderr holds this one line.
    expect(stderr.split("\n").filter((line) => line !== "" && !line.startsWith("{"))).toEqual([
      "warning: --auth-token puts the token on the command line, where ps shows it to every user of this machine; " +
        "keep it in daemon.authToken in config.json (0600: svc config set daemon.authToken < file) or pass --auth-token-file <path> instead",
    ]);
    expect(stdout + stderr).not.toContain(token);
  });

  it("refuses both flags together, an empty token file and a missing one (exit 2, no daemon started, no token echoed)", async () => {
    const t = await makeTempHome();
    try {
      const file = join(t.home, "token");
      await writeFile(file, "secret-in-file\n");
      const both = await runCli(["serve", "--port", "0", "--auth-token", "secret-on-argv", "--auth-token-file", file], {
        home: t.home,
      });
      expect([both.code, both.stderr]).toEqual([
        2,
        expect.stringContaining("give --auth-token or --auth-token-file, not both"),
      ]);
      expect(both.stdout + both.stderr).not.toMatch(/secret-on-argv|secret-in-file/);
      await writeFile(file, "\n");
      const empty = await runCli(["serve", "--port", "0", "--auth-token-file", file], { home: t.home });
      expect([empty.code, empty.stderr]).toEqual([
        2,
        expect.stringContaining(`--auth-token-file ${file}: the file is empty`),
      ]);
      const missing = await runCli(["serve", "--port", "0", "--auth-token-file", join(t.home, "absent")], {
        home: t.home,
      });
      expect([missing.code, missing.stderr]).toEqual([
        2,
        expect.stringContaining(`--auth-token-file ${join(t.home, "absent")}: no such file`),
      ]);
      expect(
        await stat(join(t.home, "runtime.json")).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
    } finally {
      await t.cleanup();
    }
  });
});

describe("browser guards", () => {
  let d: DaemonProcess;
  let done: () => Promise<void>;
  beforeAll(
    async () => ({ d, cleanup: done } = await daemonWith({ daemon: { allowedOrigins: ["http://app.example:3000"] } })),
  );
  afterAll(() => done());

  it("answers a preflight only for an allowed origin", async () => {
    const ok = await rawRequest(d.port, {
      method: "OPTIONS",
      path: "/heartbeat/tick",
      headers: {
        origin: "http://app.example:3000",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization",
      },
    });
    expect(ok.status).toBe(204);
    expect(ok.headers["access-control-allow-origin"]).toBe("http://app.example:3000");
    const bad = await rawRequest(d.port, {
      method: "OPTIONS",
      path: "/heartbeat/tick",
      headers: { origin: "http://evil.example" },
    });
    expect(bad.status).toBe(403);
    expect(bad.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("refuses a state-changing request from any other origin, even from loopback", async () => {
    const res = await rawRequest(d.port, {
      method: "POST",
      path: "/heartbeat/tick",
      headers: { origin: "http://evil.example", "content-type": "text/plain" },
    });
    expect(res.status).toBe(403);
    expect(res.json().error.code).toBe("forbidden");
  });

  it("serves an allowed origin with CORS headers", async () => {
    const res = await rawRequest(d.port, {
      method: "POST",
      path: "/heartbeat/tick",
      headers: { origin: "http://app.example:3000" },
    });
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
