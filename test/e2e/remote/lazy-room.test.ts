/**
 * The remote room loads on first use: a daemon with no pairing and no tunnel neither makes nor
 * reads its remote identity at start (nor loads the relay, pairing and tunnel modules); the
 * first pairing verb does. A daemon with pairings to keep open still opens them at boot, before
 * anyone asks.
 */
import { access } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDENTITY_FILE } from "../../../core/remote/identity.js";
import { accept, offer, relayAndTwoNodes, waitConnected, waitFor } from "./helpers.js";

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

describe("the remote room loads on first use", { timeout: 90_000 }, () => {
  let nodes: Awaited<ReturnType<typeof relayAndTwoNodes>>;
  beforeAll(async () => void (nodes = await relayAndTwoNodes()));
  afterAll(async () => nodes?.stop());

  it("a daemon with nothing paired has no remote identity until a pairing verb needs it", async () => {
    const { a } = nodes;
    expect((await a.daemon.fetch("/health")).status).toBe(200);
    expect(await a.cli(["sentinel", "list"])).toMatchObject({ code: 0 });
    expect(await exists(join(a.home, IDENTITY_FILE))).toBe(false);
    const ls = await a.cli(["pair", "ls", "--json"]);
    expect(JSON.parse(ls.stdout)).toEqual({ pairings: [] });
    await offer(a);
    expect(await exists(join(a.home, IDENTITY_FILE))).toBe(true);
  });

  it("a daemon with pairings opens their links at boot, before any request", async () => {
    const { relay, a, b } = nodes;
    const id = (await accept(b, await offer(a))).id!;
    await waitConnected(a, id);
    await waitConnected(b, id);
    await a.daemon.stop();
    await b.daemon.stop();
    await waitFor("the relay to see both leave", async () => relay.connections() === 0);
    await a.restart();
    await b.restart();
    // No route is called: the relay alone shows both links back.
    await waitFor("both links on the relay", async () => relay.connections() === 2);
    await waitConnected(b, id);
  });
});
