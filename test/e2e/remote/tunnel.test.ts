/**
 * The tunnel with a real daemon dialling a real relay on loopback: `--connect`, the token and its
 * credentials.json fallback, tunnelled requests that are never loopback, reconnect after a relay
 * restart, a clean stop, and end-to-end encryption whose frames carry no known plaintext.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRelay } from "../../../core/remote/relay/relay-server.js";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { fromB64u } from "../../../core/remote/web/bytes.js";
import { E2E_CONTENT_TYPE, sealRequest } from "../../../core/remote/web/tunnel-e2e.js";
import { makeTempHome, runCli, startDaemonProcess } from "../../support/cli.js";
import { relayWithTap, startNode, waitFor, type Node } from "./helpers.js";
import { FIXTURE_AGENTS } from "../../core/sessions/harness.js";

/** The host token (the daemon's and the relay's) and the caller token derived from it (callers'). */
const TOKEN = "tunnel-token-5b1e3c0d9a";
const CALLER = callerTokenFor(TOKEN);
const AUTH = "daemon-auth-token-77aa12";

const publicUrlOf = (logs: string) => /tunnel open: (\S+)/.exec(logs)?.[1];

describe("tunnel", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let node: Node;
  let url: string;

  beforeAll(async () => {
    relay = await relayWithTap({ tunnelTokens: [TOKEN] });
    node = await startNode({ tunnel: { token: TOKEN } }, ["--connect", relay.url]);
    url = await waitFor("the public URL", async () => publicUrlOf(node.daemon.logs()));
  });
  afterAll(async () => {
    await node?.cleanup();
    await relay?.close();
  });

  it("svc serve prints the public URL; GET /sentinels goes through with the caller token and is refused without", async () => {
    expect(url).toMatch(new RegExp(`^${relay.httpUrl}/t/[0-9a-f]{16}/$`));
    await node.cli(["sentinel", "watch", "job:tun", "--session", "ses_tun", "--label", "tunnel label 3141"]);
    const ok = await fetch(url + "sentinels", { headers: { authorization: `Bearer ${CALLER}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("tunnel label 3141");
    expect((await fetch(url + "sentinels")).status).toBe(401);
    expect((await fetch(url + "sentinels", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    // Neither token went further than the relay.
    expect(relay.frames.some((f) => f.data.includes(TOKEN) || f.data.includes(CALLER))).toBe(false);
    // The CLI's client: the token from the environment, never the command line.
    const viaCli = await runCli(["tunnel", "call", url, "/sentinels"], {
      home: node.home,
      env: { SVC_TUNNEL_TOKEN: CALLER },
    });
    expect(viaCli.stdout).toContain("tunnel label 3141");
    const noToken = await runCli(["tunnel", "call", url, "/sentinels"], { home: node.home });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("SVC_TUNNEL_TOKEN");
  });

  it("a tunnelled request is never loopback, and a plain one only reads", async () => {
    expect((await fetch(url + "sentinels", { headers: { authorization: `Bearer ${CALLER}` } })).status).toBe(200);
    const r = await fetch(url + "sentinels/poll-now", {
      method: "POST",
      headers: { authorization: `Bearer ${CALLER}` },
    });
    expect(r.status).toBe(403);
    expect(await r.text()).toContain("plain tunnel requests never operate");
    const outbound = await fetch(url + "sentinels", {
      method: "POST",
      headers: { authorization: `Bearer ${CALLER}`, "content-type": "application/json" },
      body: JSON.stringify({
        match: [{ subject: "x:y" }],
        target: { kind: "webhook", url: "https://example.invalid/h" },
      }),
    });
    expect(outbound.status).toBe(403);
  });

  it("reconnects after a relay restart, and a clean stop closes the tunnel", async () => {
    const port = relay.port;
    await relay.close();
    const again = await startRelay({ port, bind: "127.0.0.1", tunnelTokens: [TOKEN] });
    try {
      await waitFor("the tunnel to reopen", async () => (node.daemon.logs().match(/tunnel open: /g) ?? []).length >= 2);
      expect((await fetch(url + "sentinels", { headers: { authorization: `Bearer ${CALLER}` } })).status).toBe(200);
      await node.daemon.stop();
      await waitFor("the relay to see the tunnel close", async () => again.connections() === 0);
      const off = await fetch(url + "sentinels", { headers: { authorization: `Bearer ${CALLER}` } });
      expect(off.status).toBe(502);
      await node.restart();
    } finally {
      await node.daemon.stop();
      await again.close();
    }
  });

  it("uses the token in credentials.json when tunnel.token is unset, and tunnel.autoconnect with tunnel.host", async () => {
    const r = await relayWithTap({ tunnelTokens: [TOKEN] });
    const { home, cleanup } = await makeTempHome("svc-tunnel-");
    await writeFile(join(home, "config.json"), JSON.stringify({ tunnel: { host: r.url, autoconnect: true } }));
    await writeFile(
      join(home, "credentials.json"),
      JSON.stringify({ version: 1, values: { tunnel: { token: TOKEN } } }),
      { mode: 0o600 },
    );
    const d = await startDaemonProcess({ home });
    try {
      const u = await waitFor("the public URL", async () => publicUrlOf(d.logs()));
      expect((await fetch(u + "health", { headers: { authorization: `Bearer ${CALLER}` } })).status).toBe(200);
    } finally {
      await d.stop();
      await cleanup();
      await r.close();
    }
  });

  it("e2e needs a token, with SPEC.md's message", async () => {
    const { home, cleanup } = await makeTempHome("svc-tunnel-");
    await writeFile(join(home, "config.json"), JSON.stringify({ tunnel: { e2e: true } }));
    try {
      await expect(startDaemonProcess({ home, args: ["--connect", relay.url] })).rejects.toThrow(
        /tunnel.e2e: true requires tunnel.token to be set/,
      );
    } finally {
      await cleanup();
    }
  });
});

describe("tunnel with end-to-end encryption", { timeout: 90_000 }, () => {
  it("relays ciphertext only: no frame contains a sentinel label, a token or a transcript line", async () => {
    const relay = await relayWithTap({ tunnelTokens: [TOKEN] });
    const node = await startNode(
      { tunnel: { token: TOKEN, e2e: true }, daemon: { authToken: AUTH }, acpAgents: FIXTURE_AGENTS },
      ["--connect", relay.url],
    );
    try {
      const url = await waitFor("the public URL", async () => publicUrlOf(node.daemon.logs()));
      const key = fromB64u(/tunnel end-to-end key: (\S+)/.exec(node.daemon.logs())![1]!)!;
      await node.cli(["sentinel", "watch", "job:e2e", "--session", "ses_e2e", "--label", "e2e label 2718"]);
      const run = await node.cli([
        "sessions",
        "run",
        "--adapter",
        "echo",
        "--prompt",
        "transcript line 1618",
        "--keep",
        "--json",
      ]);
      expect(run.code).toBe(0);
      const sessionId = (JSON.parse(run.stdout) as { descriptor: { id: string } }).descriptor.id;
      // A plain request is refused: this tunnel serves sealed requests only.
      expect((await fetch(url + "health", { headers: { authorization: `Bearer ${CALLER}` } })).status).toBe(403);
      const call = async (path: string, auth = AUTH) => {
        const sealed = await sealRequest(
          key,
          { method: "GET", path, headers: { authorization: `Bearer ${auth}` } },
          Date.now(),
        );
        const res = await fetch(url, {
          method: "POST",
          headers: { authorization: `Bearer ${CALLER}`, "content-type": E2E_CONTENT_TYPE },
          body: sealed.body,
        });
        expect(res.status).toBe(200);
        return { sealed, raw: new Uint8Array(await res.arrayBuffer()) };
      };
      const { sealed, raw } = await call("/sentinels");
      const answer = await sealed.openResponse(raw as never);
      expect(answer.status).toBe(200);
      expect(answer.body).toContain("e2e label 2718");
      const events = await call(`/sessions/${sessionId}/events`);
      const transcript = await events.sealed.openResponse(events.raw as never);
      expect(transcript.body).toContain("echo: transcript line 1618");
      // The daemon's own token inside the envelope is checked as usual: a wrong one is refused.
      const wrong = await call("/sentinels", "not-the-token");
      expect((await wrong.sealed.openResponse(wrong.raw as never)).status).toBe(401);
      // A replayed sealed request is refused.
      const replay = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${CALLER}`, "content-type": E2E_CONTENT_TYPE },
        body: sealed.body,
      });
      expect(replay.status).toBe(400);
      expect(await replay.text()).toContain("replayed");

      // The CLI's client seals to the key svc serve printed; the daemon's token rides inside.
      const keyText = /tunnel end-to-end key: (\S+)/.exec(node.daemon.logs())![1]!;
      const env = { SVC_TUNNEL_TOKEN: CALLER, SVC_REMOTE_AUTH_TOKEN: AUTH };
      const viaCli = await runCli(["tunnel", "call", url, "/sentinels", "--key", keyText], { home: node.home, env });
      expect(viaCli.stderr).toBe("");
      expect(viaCli.stdout).toContain("e2e label 2718");
      const noAuth = await runCli(["tunnel", "call", url, "/sentinels", "--key", keyText], {
        home: node.home,
        env: { SVC_TUNNEL_TOKEN: CALLER },
      });
      expect(noAuth.code).toBe(1);
      expect(noAuth.stderr).toMatch(/bearer token is required/);
      const otherKey = Buffer.alloc(32, 9).toString("base64url");
      const wrongKey = await runCli(["tunnel", "call", url, "/sentinels", "--key", otherKey], { home: node.home, env });
      expect(wrongKey.code).toBe(1);
      expect(wrongKey.stderr).toMatch(/did not open/);

      const tunnelFrames = relay.frames.filter((f) => f.kind === "tunnel");
      expect(tunnelFrames.length).toBeGreaterThanOrEqual(8);
      for (const known of ["e2e label 2718", TOKEN, CALLER, AUTH, "transcript line 1618", "/sentinels"]) {
        for (const f of tunnelFrames) {
          expect(f.data.includes(known)).toBe(false);
          expect(f.data.includes(Buffer.from(known).toString("base64"))).toBe(false);
        }
      }
    } finally {
      await node.cleanup();
      await relay.close();
    }
  });
});
