/**
 * The tunnel's two credentials, with a real relay, a real daemon dialling it (`--connect`) and
 * real WebSockets: a caller token can never open or replace the tunnel (the daemon keeps serving
 * the next caller), the host token is refused on the public side, only the host token replaces a
 * stale host connection, and the relay, the daemon's `svc tunnel caller-token` and `svc tunnel
 * call` agree on the caller token.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TunnelRequestFrame } from "../../../core/remote/relay/tunnel-host.js";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { makeTempHome, runCli } from "../../support/cli.js";
import { relayWithTap, startNode, waitFor, type Node } from "./helpers.js";

const TOKEN = "credentials-host-token-4c2e91";
const CALLER = callerTokenFor(TOKEN);

const publicUrlOf = (logs: string) => /tunnel open: (\S+)/.exec(logs)?.[1];
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

type Dialled =
  | { ws: WebSocket; url: string; requests: TunnelRequestFrame[]; closed: Promise<{ code: number; reason: string }> }
  | { status: number; body: string };

/**
 * Opens `/v1/tunnel` with `token` as a bare host would: on `ready` it answers every request with
 * `answer` and records it; a refused upgrade resolves to its status and body.
 */
function dial(relayUrl: string, token: string, answer: string): Promise<Dialled> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${relayUrl}/tunnel`, { headers: bearer(token) });
    const requests: TunnelRequestFrame[] = [];
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.once("close", (code, reason) => r({ code, reason: reason.toString() })),
    );
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on("error", (err) => (err.message.includes("Unexpected server response") ? undefined : reject(err)));
    ws.on("message", (data) => {
      const m = JSON.parse(String(data)) as { t: "ready"; url: string } | TunnelRequestFrame;
      if (m.t === "ready") return resolve({ ws, url: m.url, requests, closed });
      requests.push(m);
      ws.send(
        JSON.stringify({
          t: "res",
          id: m.id,
          status: 200,
          headers: { "content-type": "text/plain" },
          body: Buffer.from(answer).toString("base64"),
        }),
      );
    });
  });
}

describe("the tunnel's two credentials", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  const relayLogs: string[] = [];
  let node: Node;
  let url: string;

  beforeAll(async () => {
    relay = await relayWithTap({
      tunnelTokens: [TOKEN],
      log: (message, fields) => relayLogs.push(JSON.stringify({ message, ...fields })),
    });
    node = await startNode({ tunnel: { token: TOKEN } }, ["--connect", relay.url]);
    url = await waitFor("the public URL", async () => publicUrlOf(node.daemon.logs()));
    await node.cli(["sentinel", "watch", "job:cred", "--session", "ses_cred", "--label", "served by the daemon 6174"]);
  });
  afterAll(async () => {
    await node?.cleanup();
    await relay?.close();
  });

  it("a caller token cannot register as the host: 401, and the daemon keeps serving the next caller", async () => {
    const hijack = await dial(relay.url, CALLER, "answered by an impostor");
    expect(hijack).toMatchObject({ status: 401 });
    expect("body" in hijack && hijack.body).toMatch(/caller token: .*can never open or replace the tunnel/);
    expect(relayLogs.some((l) => l.includes("tunnel refused: caller token"))).toBe(true);
    expect(relayLogs.join("\n")).not.toContain(CALLER);

    const next = await fetch(url + "sentinels", { headers: bearer(CALLER) });
    expect(next.status).toBe(200);
    expect(await next.text()).toContain("served by the daemon 6174");
    // The daemon's own connection was never replaced, so it never had to reopen.
    expect(node.daemon.logs().match(/tunnel open: /g)).toHaveLength(1);
  });

  it("the host token is refused on the public side, saying callers use the caller token", async () => {
    const r = await fetch(url + "sentinels", { headers: bearer(TOKEN) });
    expect(r.status).toBe(401);
    const text = await r.text();
    expect(text).toMatch(/host token, the daemon's own credential.*svc tunnel caller-token/);
    expect(text).not.toContain(TOKEN);
    // A caller still holding the old shared token (now the host token) is told what to use instead.
    const old = await runCli(["tunnel", "call", url, "/sentinels"], {
      home: node.home,
      env: { SVC_TUNNEL_TOKEN: TOKEN },
    });
    expect(old.code).toBe(1);
    expect(old.stderr).toMatch(/host token.*svc tunnel caller-token/);
    expect(old.stdout).not.toContain("served by the daemon 6174");
  });

  it("relay, daemon and CLI derive the same caller token; the host token is never printed", async () => {
    const printed = await node.cli(["tunnel", "caller-token"]);
    expect(printed.stderr).toBe("");
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(CALLER + "\n");
    // The relay accepts what the daemon's owner printed, and so does `svc tunnel call`.
    expect((await fetch(url + "health", { headers: bearer(printed.stdout.trim()) })).status).toBe(200);
    const viaCli = await runCli(["tunnel", "call", url, "/sentinels"], {
      home: node.home,
      env: { SVC_TUNNEL_TOKEN: printed.stdout.trim() },
    });
    expect(viaCli.stdout).toContain("served by the daemon 6174");

    // From credentials.json when tunnel.token is unset; a clear error with neither.
    const other = await makeTempHome("svc-caller-token-");
    try {
      const stored = "stored-host-token-0b7d55";
      await writeFile(
        join(other.home, "credentials.json"),
        JSON.stringify({ version: 1, values: { tunnel: { token: stored } } }),
        { mode: 0o600 },
      );
      const fromCreds = await runCli(["tunnel", "caller-token"], { home: other.home });
      expect(fromCreds.stdout).toBe(callerTokenFor(stored) + "\n");
      expect(fromCreds.stdout).not.toContain(stored);
      await writeFile(join(other.home, "credentials.json"), JSON.stringify({ version: 1, values: {} }), {
        mode: 0o600,
      });
      const none = await runCli(["tunnel", "caller-token"], { home: other.home });
      expect(none.code).toBe(1);
      expect(none.stdout).toBe("");
      expect(none.stderr).toMatch(/no tunnel host token.*tunnel\.token.*tunnel\/token/);
    } finally {
      await other.cleanup();
    }
  });
});

describe("replacing a tunnel's host connection", { timeout: 60_000 }, () => {
  it("takes the host token: a caller token leaves the live connection serving", async () => {
    const host = "replace-host-token-93e0aa";
    const relay = await relayWithTap({ tunnelTokens: [host] });
    const open: WebSocket[] = [];
    try {
      const stale = await dial(relay.url, host, "answered by the first connection");
      if (!("ws" in stale)) throw new Error(`the first host connection was refused: ${stale.status}`);
      open.push(stale.ws);
      const call = async () => (await fetch(stale.url + "health", { headers: bearer(callerTokenFor(host)) })).text();
      expect(await call()).toBe("answered by the first connection");

      const byCaller = await dial(relay.url, callerTokenFor(host), "answered by a caller");
      expect(byCaller).toMatchObject({ status: 401 });
      expect(stale.ws.readyState).toBe(WebSocket.OPEN);
      expect(await call()).toBe("answered by the first connection");

      const second = await dial(relay.url, host, "answered by the second connection");
      if (!("ws" in second)) throw new Error(`the second host connection was refused: ${second.status}`);
      open.push(second.ws);
      expect(second.url).toBe(stale.url);
      expect(await stale.closed).toEqual({ code: 4000, reason: "replaced by a new connection" });
      expect(await call()).toBe("answered by the second connection");
      expect(stale.requests).toHaveLength(2);
      expect(second.requests).toHaveLength(1);
    } finally {
      for (const ws of open) ws.terminate();
      await relay.close();
    }
  });
});
