/**
 * A paired end is a remote caller of the far daemon with its pairing's scope (read by default),
 * authenticated by the link whether or not `daemon.authToken` is set there; the far daemon's token
 * (SVC_REMOTE_AUTH_TOKEN) makes it the owner, and rides only inside the link. The pairing files
 * are 0600 and listings never show the link secret.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.js";
import { accept, offer, relayWithTap, startNode, waitConnected, type Node } from "./helpers.js";

const AUTH = "far-daemon-token-4411";

describe("authorization through a pairing", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let a: Node;
  let b: Node;
  let id: string;

  beforeAll(async () => {
    relay = await relayWithTap();
    a = await startNode({ pairing: { rendezvous: relay.url }, daemon: { authToken: AUTH } });
    b = await startNode({ pairing: { rendezvous: relay.url } });
    const r = await accept(b, await offer(a));
    id = r.id!;
    await waitConnected(b, id);
  });
  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await relay?.close();
  });

  it("reads by its scope even when the far daemon has a token; operating needs the scope or that token, carried only inside the link", async () => {
    const read = await b.cli(["--remote", id, "sentinel", "list", "--json"]);
    expect(read.stderr).toBe("");
    expect(JSON.parse(read.stdout)).toEqual({ sentinels: [] });
    const refused = await b.cli(["--remote", id, "sentinel", "poll-now"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).toContain(`pairing ${id} (scope read) may only read`);
    const ok = await runCli(["--remote", id, "sentinel", "list", "--json"], {
      home: b.home,
      env: { SVC_REMOTE_AUTH_TOKEN: AUTH },
    });
    expect(ok.stderr).toBe("");
    expect(JSON.parse(ok.stdout)).toEqual({ sentinels: [] });
    const poll = await runCli(["--remote", id, "sentinel", "poll-now"], {
      home: b.home,
      env: { SVC_REMOTE_AUTH_TOKEN: AUTH },
    });
    expect(poll.code).toBe(0);
    expect(relay.frames.some((f) => f.data.includes(AUTH))).toBe(false);
  });

  it("--remote is refused for verbs that act on this machine only", async () => {
    const r = await b.cli(["--remote", id, "config", "show"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--remote runs daemon verbs");
  });

  it("keeps the identity and the pairings in 0600 files, and no listing shows the link secret", async () => {
    for (const n of [a, b]) {
      for (const f of ["pairings.json", "remote-identity.json"])
        expect((await stat(join(n.home, f))).mode & 0o777).toBe(0o600);
      const secret = (
        JSON.parse(await readFile(join(n.home, "pairings.json"), "utf8")) as { pairings: Array<{ secret: string }> }
      ).pairings[0]!.secret;
      const ls = await n.cli(["pair", "ls", "--json"]);
      expect(ls.stdout).toContain(id);
      expect(ls.stdout).not.toContain(secret);
      expect(n.daemon.logs()).not.toContain(secret);
    }
  });
});
