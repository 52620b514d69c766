/**
 * Issue 42, finding 1: DNS rebinding against a daemon bound beyond loopback with daemon.authToken
 * set. The real daemon runs in a network namespace of its own (`unshare -n`: only `lo`, with
 * 192.0.2.10 added to it as this machine's LAN address), bound to 0.0.0.0; a page under a rebound
 * name reaches it on 127.0.0.1 with `Host: evil.example:<port>`. Every route refuses it 403, a
 * loopback Host keeps the loopback exemption, and this machine's address or a name in
 * daemon.allowedHosts passes the Host check but needs the token like any caller beyond loopback.
 */
import { spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURE_AGENTS } from "../core/sessions/harness.js";
import { childEnv, makeTempHome } from "../support/cli.js";
import { CLI_PATH, FIXTURES } from "../support/paths.js";

const STABLE = "rebinding-stable-token-3141592653";
const LAN = "192.0.2.10";
const EVIL = "evil.example:{port}";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-03-26",
    capabilities: {},
    clientInfo: { name: "rebinding-probe", version: "1.0.0" },
  },
};

/** The routes of the issue: REST reads, a session's transcript and export, `/events`, the page, `/mcp`. */
const ROUTES: Array<{ path: string; method?: string; body?: unknown }> = [
  { path: "/sessions" },
  { path: "/sessions/{id}/events" },
  { path: "/sessions/{id}/export" },
  { path: "/events" },
  { path: "/conversations" },
  { path: "/sentinels" },
  { path: "/ui/" },
  { path: "/mcp", method: "POST", body: INITIALIZE },
];

interface Result {
  host: string;
  path: string;
  method: string;
  token: boolean;
  status: number;
  message?: string;
}

/** Whether this process may make a network namespace (root, or user namespaces allowed). */
function canUnshare(): boolean {
  const r = spawnSync("unshare", ["-n", "ip", "link", "set", "lo", "up"], { stdio: "ignore", timeout: 10_000 });
  return r.status === 0;
}

function runProbe(home: string, probes: unknown[]): Promise<{ port: number; sessionId: string; results: Result[] }> {
  const script = `ip link set lo up && ip addr add ${LAN}/32 dev lo && exec "$0" "$@"`;
  return new Promise((resolve, reject) => {
    const child = spawn(
      "unshare",
      [
        "-n",
        "bash",
        "-c",
        script,
        process.execPath,
        join(FIXTURES, "scripts/rebinding-probe.mjs"),
        CLI_PATH,
        JSON.stringify(probes),
      ],
      { env: childEnv(home), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`the probe exited with ${code}:\n${stderr}`));
      resolve(JSON.parse(stdout));
    });
  });
}

const unshareAllowed = canUnshare();

describe("DNS rebinding on a wide bind (0.0.0.0, daemon.authToken set), in a network namespace", {
  timeout: 180_000,
}, () => {
  let home: string;
  let cleanup: (() => Promise<void>) | undefined;
  let results: Result[] = [];
  const answer = (host: string, path: string, token = false) => {
    const r = results.find((x) => x.host === host && x.path === path && x.token === token);
    if (!r) throw new Error(`no probe ${host} ${path} token=${token}`);
    return r;
  };

  beforeAll(async () => {
    if (!unshareAllowed) return;
    ({ home, cleanup } = await makeTempHome("svc-rebinding-"));
    await writeFile(
      join(home, "config.json"),
      JSON.stringify({
        daemon: { authToken: STABLE, allowedHosts: ["svc.example"] },
        acpAgents: { echo: FIXTURE_AGENTS.echo },
      }),
      { mode: 0o600 },
    );
    const probes = [
      ...ROUTES.map((r) => ({ ...r, host: EVIL })),
      ...ROUTES.map((r) => ({ ...r, host: EVIL, token: STABLE })),
      ...ROUTES.map((r) => ({ ...r, host: "127.0.0.1:{port}" })),
      ...ROUTES.map((r) => ({ ...r, host: "localhost:{port}" })),
      ...["svc.example:{port}", `${LAN}:{port}`].flatMap((host) => [
        { host, path: "/sessions" },
        { host, path: "/sessions/{id}/events" },
        { host, path: "/sessions", token: STABLE },
        { host, path: "/sessions/{id}/events", token: STABLE },
      ]),
    ];
    ({ results } = await runProbe(home, probes));
  });
  afterAll(async () => {
    await cleanup?.();
  });

  it("a foreign Host is refused 403 on every route, with or without the token", (ctx) => {
    if (!unshareAllowed)
      ctx.skip("`unshare -n` is not allowed here (needs root or user namespaces): no network namespace");
    for (const token of [false, true])
      for (const r of ROUTES) {
        const got = answer(EVIL, r.path, token);
        expect({ path: r.path, token, status: got.status }).toEqual({ path: r.path, token, status: 403 });
        expect(got.message).toMatch(/^Host "evil\.example" does not name this daemon .*daemon\.allowedHosts/);
      }
  });

  it("a loopback Host without a token keeps the loopback exemption", (ctx) => {
    if (!unshareAllowed)
      ctx.skip("`unshare -n` is not allowed here (needs root or user namespaces): no network namespace");
    for (const host of ["127.0.0.1:{port}", "localhost:{port}"])
      for (const r of ROUTES)
        expect({ host, path: r.path, status: answer(host, r.path).status }).toEqual({
          host,
          path: r.path,
          status: 200,
        });
  });

  it("this machine's LAN address and a name in daemon.allowedHosts pass the Host check but need the token", (ctx) => {
    if (!unshareAllowed)
      ctx.skip("`unshare -n` is not allowed here (needs root or user namespaces): no network namespace");
    for (const host of ["svc.example:{port}", `${LAN}:{port}`])
      for (const path of ["/sessions", "/sessions/{id}/events"]) {
        const bare = answer(host, path);
        expect({ host, path, status: bare.status }).toEqual({ host, path, status: 401 });
        expect(bare.message).toMatch(/a bearer token is required/);
        expect({ host, path, status: answer(host, path, true).status }).toEqual({ host, path, status: 200 });
      }
  });
});
