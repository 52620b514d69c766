/**
 * Issue 28: `svc status` in full, against the real daemon and the real CLI: sessions by activity,
 * sentinels, a pending and a dead delivery, an adapter that loaded and one that failed, pairings
 * and the tunnel, through one `GET /status`; exit 3 and the hint when no daemon runs. And the
 * CLI's fast path for `svc status` and `svc sentinel list` (no commander loaded) prints exactly
 * what the commander program prints, errors and usage errors included.
 */
import { readdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess, type CliResult } from "../support/cli.js";
import { REPO_ROOT } from "../support/paths.js";
import { makeSandbox } from "../core/plugin-host/sandbox.js";
import { FIXTURE_AGENTS } from "../core/sessions/harness.js";
import { LOOPBACK_CONFIG, startWebhookReceiver, until, type WebhookReceiver } from "../support/webhook-receiver.js";

/** The built-in packages: one manifest each (issue 43: `svc status` counted none of them). */
const BUILTINS = readdirSync(join(REPO_ROOT, "manifests/builtin")).filter((f) => f.endsWith(".json")).length;
const SECRET = `whsec_${Buffer.alloc(32, 28).toString("base64")}`;
const PAIRING = {
  id: "pr_status28",
  role: "host",
  label: "laptop",
  peerKey: Buffer.alloc(32, 1).toString("base64url"),
  peerFingerprint: "ab12-cd34",
  secret: Buffer.alloc(32, 2).toString("base64url"),
  channel: "status28-channel",
  rendezvous: "wss://relay.invalid/v1",
  createdAt: Date.UTC(2026, 10, 27),
  scope: "operate",
};

describe("svc status and the CLI's fast path (real daemon)", () => {
  let rx: WebhookReceiver;
  let webhookId: string;
  let sessionId: string;
  const held: ServerResponse[] = [];
  beforeAll(async () => {
    rx = await startWebhookReceiver([SECRET]);
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    await rx?.close();
  });
  const fx = useDaemonProcess({
    makeHome: makeSandbox,
    setup: async (sb) => {
      await sb.place("install", "svc-fixture-provider");
      await sb.place("install", "svc-fixture-throws");
      // A pairing on file whose link is not opened (no autoconnect): listed, with its link off.
      await writeFile(
        join(sb.home, "pairings.json"),
        JSON.stringify({ version: 1, pairings: [PAIRING], usedOffers: [] }),
        {
          mode: 0o600,
        },
      );
      await sb.writeConfig({
        ...LOOPBACK_CONFIG,
        pairing: { autoconnect: false },
        adapters: ["svc-fixture-provider", "svc-fixture-throws"],
        acpAgents: { echo: FIXTURE_AGENTS.echo },
        // A session stays `running` (in activity) this long after its last turn: the whole test.
        sessions: { attentionDelaySec: 86_400 },
      });
      return { env: { SVC_INSTALL_DIR: sb.install } };
    },
  });
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli(args, { home: fx.home, env: { SVC_INSTALL_DIR: fx.sandbox.install, ...env } });
  const outbox = async () =>
    ((await (await fx.daemon.fetch(`/sentinels/${webhookId}`)).json()) as any).target.outbox as {
      pending: number;
      dead: number;
    };

  beforeAll(async () => {
    const created = await fx.daemon.fetch("/sentinels", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "st:*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      }),
    });
    expect(created.status).toBe(201);
    webhookId = ((await created.json()) as { id: string }).id;
    // One delivery the receiver refuses for good (dead), then one it keeps failing (pending, retried).
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    expect((await cli(["sentinel", "push", "st:a", "--type", "st.test", "--id", "st1"])).code).toBe(0);
    await until(async () => (await outbox()).dead === 1, "st1 dead");
    // Held unanswered: pending through its first attempt (15 s) and its retries, until answered below.
    rx.respond = (_d, res) => void held.push(res);
    expect((await cli(["sentinel", "push", "st:a", "--type", "st.test", "--id", "st2"])).code).toBe(0);
    await until(async () => (await outbox()).pending === 1, "st2 pending");
    const session = await fx.daemon.fetch("/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ adapter: "echo", cwd: fx.sandbox.cwd }),
    });
    expect(session.status, await session.clone().text()).toBe(201);
    sessionId = ((await session.json()) as { id: string }).id;
    const watch = await cli(["sentinel", "watch", "st:b", "--session", sessionId]);
    expect(watch.code, watch.stderr).toBe(0);
  });

  it("--json: where the daemon runs and what it holds, each figure true", async () => {
    const r = await cli(["status", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s).toEqual({
      running: true,
      home: fx.home,
      pid: fx.daemon.child.pid,
      url: fx.daemon.baseUrl,
      bind: "127.0.0.1",
      port: fx.daemon.port,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      uptimeMs: expect.any(Number),
      answering: true,
      warnings: [],
      sessions: { total: 1, running: 1, attention: 0, quiet: 0, ended: 0 },
      sentinels: { total: 2, active: 2, expired: 0, byTarget: { webhook: 1, session: 1 } },
      deliveries: { pending: 1, dead: 1 },
      adapters: {
        builtin: BUILTINS,
        loaded: [{ package: "svc-fixture-provider", version: "1.0.0", plugins: ["provider:fixture-ticks"] }],
        failed: [
          {
            package: "svc-fixture-throws",
            phase: "import",
            message: expect.stringContaining("fixture entry exploded at import"),
          },
        ],
      },
      remote: {
        pairings: [
          {
            id: "pr_status28",
            label: "laptop",
            role: "host",
            scope: "operate",
            link: { state: "off", since: PAIRING.createdAt, attempts: 0 },
          },
        ],
        tunnel: { state: "off" },
      },
      store: { kind: "file" },
    });
  });

  it("reads as aligned labelled lines", async () => {
    const r = await cli(["status"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^svc daemon: running, pid ${fx.daemon.child.pid}, 127\\.0\\.0\\.1:${fx.daemon.port} \\(${fx.daemon.baseUrl}\\), version \\S+, up \\d+ (s|min)$`,
      ),
    );
    expect(lines.slice(1)).toEqual([
      `home        ${fx.home}`,
      "sessions    1: 1 running, 0 attention, 0 quiet, 0 ended",
      "sentinels   2: 2 active, 0 expired (webhook 1, session 1)",
      "deliveries  1 pending, 1 dead",
      `adapters    ${BUILTINS + 1} loaded (${BUILTINS} built-in, 1 installed: svc-fixture-provider@1.0.0), 1 failed`,
      expect.stringMatching(/^ {12}svc-fixture-throws failed to load \(import\): .*fixture entry exploded at import/),
      "pairings    1",
      "            pr_status28  laptop (host, operate): link off",
      "tunnel      off",
    ]);
  });

  /** The two paths' answers, with the one figure that moves between two runs (uptime) masked. */
  const same = (r: CliResult) => ({
    ...r,
    stdout: r.stdout.replace(/"uptimeMs": \d+/, '"uptimeMs": 0').replace(/, up \d+ (s|min)/, ", up 0 s"),
  });
  const bothPaths = async (args: string[]) => {
    const fast = await cli(args);
    const full = await cli(args, { SVC_NO_FAST_PATH: "1" });
    expect(same(fast)).toEqual(same(full));
    return fast;
  };

  it("the fast path prints what the program prints and loads no commander; anything else is the program's", async () => {
    // Outputs compared run by run must not change between runs: the pending delivery dies now.
    rx.respond = (_d, res) => res.writeHead(410).end("gone");
    for (const res of held.splice(0)) if (!res.writableEnded) res.writeHead(410).end("gone");
    await until(async () => (await outbox()).dead === 2, "st2 dead");
    for (const args of [["status"], ["status", "--json"], ["sentinel", "list"], ["sentinel", "ls", "--json"]]) {
      const r = await bothPaths(args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    expect((await cli(["sentinel", "list"])).stdout).toMatch(new RegExp(`${webhookId}.*0 \\(2 dead\\)`));
    // NODE_DEBUG=module names each CommonJS module loaded (commander is one).
    const loads = (args: string[]) => cli(args, { NODE_DEBUG: "module" }).then((r) => /commander/.test(r.stderr));
    expect(await loads(["status"])).toBe(false);
    expect(await loads(["sentinel", "list", "--json"])).toBe(false);
    expect(await loads(["status", "--help"])).toBe(true);
    // Anything else goes to the program: a usage error is the program's, on both paths.
    const bad = await bothPaths(["status", "--bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--bogus'");
    const badJson = await bothPaths(["sentinel", "list", "--json", "extra"]);
    expect(badJson.code).toBe(2);
    expect(JSON.parse(badJson.stdout).error.code).toBe("usage");
    const help = await bothPaths(["status", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: svc status");
  });

  it("no daemon: exit 3 with the hint; sentinel list fails the same on both paths", async () => {
    await fx.daemon.stop();
    const human = await bothPaths(["status"]);
    expect(human.code).toBe(3);
    expect(human.stdout).toBe(
      `svc daemon: not running (home ${fx.home}); start it with \`svc start\` (in the background) or \`svc serve\`\n`,
    );
    const json = await bothPaths(["status", "--json"]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toEqual({ running: false, home: fx.home, warnings: [] });
    const list = await bothPaths(["sentinel", "list"]);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("no svc daemon is running");
    const listJson = await bothPaths(["sentinel", "list", "--json"]);
    expect(listJson.code).toBe(1);
    expect(JSON.parse(listJson.stdout).error.code).toBe("daemon_not_running");
  });
});

describe("svc status with no adapter packages: the built-ins are counted (real daemon)", () => {
  const fx = useDaemonProcess({ prefix: "svc-status-builtins-" });

  it("says how many adapters loaded, each built-in one of them", async () => {
    expect(BUILTINS).toBeGreaterThan(0);
    const json = await runCli(["status", "--json"], { home: fx.home });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).adapters).toEqual({ builtin: BUILTINS, loaded: [], failed: [] });
    const r = await runCli(["status"], { home: fx.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`\nadapters    ${BUILTINS} loaded (${BUILTINS} built-in, 0 installed), 0 failed\n`);
  });
});
