/**
 * A standing link can be stopped in every state. The peer end waits on the relay while its host
 * daemon is away; removing the pairing then must close that connection at once, not leave it
 * waiting for a host that may come back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accept, offer, pairings, relayAndTwoNodes, waitConnected, waitFor } from "./helpers.js";

describe("stopping a standing link", { timeout: 90_000 }, () => {
  let nodes: Awaited<ReturnType<typeof relayAndTwoNodes>>;
  beforeAll(async () => void (nodes = await relayAndTwoNodes()));
  afterAll(async () => nodes?.stop());

  it("a peer link waiting for its host closes its relay connection when the pairing is removed", async () => {
    const { relay, a, b } = nodes;
    const id = (await accept(b, await offer(a))).id!;
    await waitConnected(a, id);
    await waitConnected(b, id);
    await a.daemon.stop();
    await waitFor("B's link to wait for its host", async () =>
      (await pairings(b)).find((p) => p.id === id && p.link.state === "waiting"),
    );
    expect(relay.connections()).toBe(1);
    expect((await b.cli(["pair", "rm", id])).code).toBe(0);
    await waitFor("B's relay connection to close", async () => relay.connections() === 0);
    // Nothing is left waiting: the host, back, finds no peer on the channel.
    await a.restart();
    await waitFor("A's link to wait alone", async () =>
      (await pairings(a)).find((p) => p.id === id && p.link.state === "waiting"),
    );
    expect(relay.connections()).toBe(1);
  });
});
