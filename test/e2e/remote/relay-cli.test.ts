/**
 * `svc relay serve` as a user runs it: a child process serving wss:// and https:// with the test
 * CA's certificate, carrying a pairing and a tunnel between real daemons; its usage errors; and
 * `svc pair page` serving only the page, its modules, the dashboard's modules and the favicon.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { CLI_PATH, REPO_ROOT } from "../../support/paths.js";
import { childEnv, makeTempHome, runCli } from "../../support/cli.js";
import { accept, offer, startNode, waitConnected, waitFor } from "./helpers.js";

const TLS = join(REPO_ROOT, "test/fixtures/tls");
const TOKEN = "relay-cli-token-9911";

function spawnCli(args: string[], home: string): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    env: childEnv(home),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  return { child, out: () => out, err: () => err };
}

const stopped = (c: ChildProcess) =>
  new Promise<number | null>((r) =>
    c.exitCode !== null ? r(c.exitCode) : (c.once("exit", (code) => r(code)), c.kill("SIGTERM")),
  );

describe("svc relay serve over TLS", { timeout: 90_000 }, () => {
  let relay: ReturnType<typeof spawnCli>;
  let url: string;
  let home: { home: string; cleanup(): Promise<void> };

  beforeAll(async () => {
    home = await makeTempHome("svc-relay-");
    // Tokens come from a file (one a line), never argv, where `ps` would show them to every user.
    const tokens = join(home.home, "relay-tokens");
    await writeFile(tokens, `# tunnel tokens\n\n${TOKEN}\nanother-token-0042\n`, { mode: 0o600 });
    relay = spawnCli(
      [
        "relay",
        "serve",
        "--port",
        "0",
        "--tls-cert",
        join(TLS, "server.crt"),
        "--tls-key",
        join(TLS, "server.key"),
        "--tunnel-token-file",
        tokens,
      ],
      home.home,
    );
    url = await waitFor("the relay to listen", async () => /rendezvous (wss:\/\/\S+?),/.exec(relay.out())?.[1]);
  });
  afterAll(async () => {
    if (relay) expect(await stopped(relay.child)).toBe(0);
    await home?.cleanup();
  });

  it("serves https health, a pairing over wss, and a tunnel with an https public URL; logs no payload", async () => {
    expect(url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(await readFile(`/proc/${relay.child.pid}/cmdline`, "utf8")).not.toContain(TOKEN);
    const base = url.replace(/^wss/, "https").replace(/\/v1$/, "");
    expect(await (await fetch(`${base}/health`)).json()).toMatchObject({ ok: true });
    const a = await startNode({ pairing: { rendezvous: url }, tunnel: { token: TOKEN } }, ["--connect", url]);
    const b = await startNode({ pairing: { rendezvous: url } });
    try {
      const p = await accept(b, await offer(a));
      await waitConnected(b, p.id!);
      await a.cli(["sentinel", "watch", "job:tls", "--session", "ses_tls", "--label", "over tls 5150"]);
      expect((await b.cli(["--remote", p.id!, "sentinel", "list"])).stdout).toContain("over tls 5150");
      const pub = await waitFor("the tunnel URL", async () => /tunnel open: (\S+)/.exec(a.daemon.logs())?.[1]);
      expect(pub.startsWith(`${base}/t/`)).toBe(true);
      expect(
        await (
          await fetch(`${pub}sentinels`, { headers: { authorization: `Bearer ${callerTokenFor(TOKEN)}` } })
        ).text(),
      ).toContain("over tls 5150");
    } finally {
      await a.cleanup();
      await b.cleanup();
    }
    const logs = relay.err();
    expect(logs).toContain('"message":"tunnel opened"');
    for (const secret of ["over tls 5150", TOKEN, callerTokenFor(TOKEN), "/sentinels"])
      expect(logs).not.toContain(secret);
    for (const line of logs.trim().split("\n")) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("usage errors exit 2", async () => {
    expect((await runCli(["relay", "serve", "--tls-cert", join(TLS, "server.crt")], { home: home.home })).code).toBe(2);
    expect((await runCli(["relay", "serve", "--port", "http"], { home: home.home })).code).toBe(2);
    expect((await runCli(["relay", "serve", "--public-url", "ftp://x"], { home: home.home })).code).toBe(2);
    const unknown = await runCli(["relay", "serve", "--limit", "maxSockets=3"], { home: home.home });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("maxConnections");
    expect((await runCli(["relay", "serve", "--limit", "idleMs=0"], { home: home.home })).code).toBe(2);
    const contradict = await runCli(
      ["relay", "serve", "--limit", "maxConnections=10", "--limit", "reservedHostConnections=10"],
      { home: home.home },
    );
    expect(contradict.code).toBe(2);
    expect(contradict.stderr).toContain("reservedHostConnections (10) must be less than maxConnections (10)");
    // A token on the command line is refused: `ps` shows argv to every user of the machine.
    const onArgv = await runCli(["relay", "serve", "--port", "0", "--tunnel-token", TOKEN], { home: home.home });
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toContain("--tunnel-token-file");
    expect(onArgv.stderr).toContain("SVC_RELAY_TUNNEL_TOKENS");
    const missing = await runCli(
      ["relay", "serve", "--port", "0", "--tunnel-token-file", join(home.home, "no-such-file")],
      { home: home.home },
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no-such-file");
    const empty = join(home.home, "empty-tokens");
    await writeFile(empty, "# nothing yet\n\n");
    const none = await runCli(["relay", "serve", "--port", "0", "--tunnel-token-file", empty], { home: home.home });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no token");
  });

  it("--limit changes a bound", async () => {
    const small = spawnCli(["relay", "serve", "--port", "0", "--limit", "maxConnections=1"], home.home);
    try {
      const u = await waitFor("the relay to listen", async () => /rendezvous (ws:\/\/\S+?),/.exec(small.out())?.[1]);
      const first = new WebSocket(`${u}/channel/${"a".repeat(32)}?role=host`);
      await new Promise((r) => first.once("open", r));
      const second = new WebSocket(`${u}/channel/${"b".repeat(32)}?role=host`);
      const status = await new Promise<number>((r) =>
        second.once("unexpected-response", (_q, res) => r(res.statusCode ?? 0)),
      );
      expect(status).toBe(503);
      first.close();
    } finally {
      await stopped(small.child);
    }
  });
});

describe("svc pair page", { timeout: 90_000 }, () => {
  it("serves the page and the compiled web modules, and nothing else", async () => {
    const home = await makeTempHome("svc-page-");
    const page = spawnCli(["pair", "page", "--port", "0"], home.home);
    try {
      const base = await waitFor("the page server", async () => /svc pair page at (\S+)/.exec(page.out())?.[1]);
      const html = await fetch(base);
      expect(html.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(await html.text()).toContain('src="web/page.js"');
      expect(html.headers.get("content-security-policy")).toContain("connect-src ws: wss:");
      expect((await fetch(`${base}web/handshake.js`)).status).toBe(200);
      // The dashboard the page runs through the pairing, and the favicon (no 404 in the console).
      expect((await fetch(`${base}dashboard/web/dashboard.js`)).status).toBe(200);
      const icon = await fetch(`${base}favicon.svg`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/svg+xml");
      for (const path of [
        "web/relay-server.js",
        "web/../relay/relay-server.js",
        "core/cli/svc.js",
        "web/page.js.map",
        "dashboard/web/dashboard.js.map",
        "dashboard/web/dashboard.ts",
        "dashboard/relay-server.js",
        "remote/web/page.js",
        "package.json",
      ]) {
        expect((await fetch(base + path)).status).toBe(404);
      }
      expect((await fetch(base, { method: "POST" })).status).toBe(405);
    } finally {
      await stopped(page.child);
      await home.cleanup();
    }
  });
});
