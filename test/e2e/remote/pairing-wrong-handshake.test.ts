/**
 * A wrong handshake on a pending offer's channel changes nothing, with real daemons and a real
 * relay: a wrong secret, a forged offer for the same channel, or a raw client that sends garbage
 * and stays are each refused and dropped from the channel, and the real `svc pair accept` then
 * pairs. After MAX_REFUSED_HANDSHAKES refusals the offer is withdrawn.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REFUSED_HANDSHAKES } from "../../../core/remote/pairing/offers.js";
import { toB64u } from "../../../core/remote/web/bytes.js";
import { fingerprintOf, offerUrl, parseOffer } from "../../../core/remote/web/offer.js";
import { generateKeyPair, randomBytes } from "../../../core/remote/web/primitives.js";
import type { RunningRelay } from "../../../core/remote/relay/relay-server.js";
import { accept, garbagePeer, offer, pairings, relayAndNodes, waitConnected, waitFor, type Node } from "./helpers.js";

const refusals = (n: Node) => (n.daemon.logs().match(/pairing offer refused a handshake/g) ?? []).length;

describe("a wrong handshake leaves the offer usable", { timeout: 90_000 }, () => {
  let env: Awaited<ReturnType<typeof relayAndNodes>>;
  let relay: RunningRelay;
  let a: Node;
  let b: Node;
  let c: Node;

  beforeAll(async () => {
    env = await relayAndNodes(3);
    ({ relay } = env);
    [a, b, c] = env.nodes as [Node, Node, Node];
  });
  afterAll(async () => env?.stop());

  it("a wrong secret, a forged offer for the same channel and a client that stays are refused; the real accept then pairs", async () => {
    const text = await offer(a);
    const real = await parseOffer(text);

    const wrongSecret = await accept(c, offerUrl({ ...real, secret: randomBytes(32) }));
    expect(wrongSecret.code).toBe(1);
    expect(wrongSecret.stderr).toContain("the daemon dropped the handshake");

    // Someone who saw the channel makes an offer of their own for it (their key, their secret).
    const forger = await generateKeyPair();
    const forged = offerUrl({
      ...real,
      publicKey: forger.publicKey,
      fingerprint: await fingerprintOf(forger.publicKey),
      secret: randomBytes(32),
    });
    expect(forged).toContain(`k=${toB64u(forger.publicKey)}`);
    const viaForged = await accept(c, forged);
    expect(viaForged.code).toBe(1);
    expect(viaForged.stderr).toContain("the daemon dropped the handshake");

    // A client that does not leave after its refusal: the relay drops it at the daemon's request.
    const stays = await garbagePeer(relay.url, real.channel);
    expect(await stays.closed).toBe(4403);
    expect(stays.texts.some((t) => t.includes('"refused"'))).toBe(true);
    await waitFor("three refusals logged", async () => refusals(a) === 3);

    const ok = await accept(b, text);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    await waitConnected(a, ok.id!);
    await waitConnected(b, ok.id!);
    expect(await pairings(c)).toEqual([]);
    expect((await pairings(a)).map((p) => p.id)).toEqual([ok.id]);
  });

  it(`after ${MAX_REFUSED_HANDSHAKES} refused handshakes the offer is withdrawn`, async () => {
    const text = await offer(a);
    const { channel } = await parseOffer(text);
    const before = refusals(a);
    for (let i = 1; i < MAX_REFUSED_HANDSHAKES; i++)
      expect(await (await garbagePeer(relay.url, channel)).closed).toBe(4403);
    const last = await garbagePeer(relay.url, channel);
    await waitFor("the daemon to leave the channel", async () => last.texts.some((t) => t.includes("peer-left")));
    expect(refusals(a) - before).toBe(MAX_REFUSED_HANDSHAKES);
    expect(a.daemon.logs()).toContain("pairing offer withdrawn: too many refused handshakes");
    const r = await accept(c, text);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("used, expired or withdrawn");
  });
});
