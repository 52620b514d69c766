/**
 * The handshake and the encrypted channel with the platform's crypto, ends wired by a broker
 * under the test's control: a message goes through; an injected, reordered, replayed or altered
 * frame closes the channel; a wrong psk, prologue or peer key fails the handshake.
 */
import { describe, expect, it } from "vitest";
import { utf8 } from "../../../core/remote/web/bytes.js";
import { SecureChannel, type RemoteRequest } from "../../../core/remote/web/channel.js";
import { HandshakeError, initiate, respond } from "../../../core/remote/web/handshake.js";
import { generateKeyPair, randomBytes } from "../../../core/remote/web/primitives.js";
import { until } from "../../support/until.js";

async function pair(o: { prologueI?: string; pskI?: Uint8Array; expectPeer?: Uint8Array } = {}) {
  const host = await generateKeyPair();
  const peer = await generateKeyPair();
  const psk = randomBytes(32);
  const hs = await initiate({
    prologue: o.prologueI ?? "p",
    psk: (o.pskI ?? psk) as never,
    staticKey: peer,
    remoteStatic: host.publicKey,
    meta: { who: "peer" },
  });
  const r = await respond({
    prologue: "p",
    psk,
    staticKey: host,
    msg1: hs.msg1,
    meta: { who: "host" },
    accept: (k) => {
      if (o.expectPeer && Buffer.compare(Buffer.from(k), Buffer.from(o.expectPeer)) !== 0)
        throw new HandshakeError("wrong peer key");
    },
  });
  const done = await hs.finish(r.msg2);
  return { peerKeys: done.keys, hostKeys: r.keys, meta: done.meta, peerStatic: r.peerStatic, peer };
}

/** Two channels joined by queues the test delivers by hand (the broker). */
async function wired() {
  const { peerKeys, hostKeys } = await pair();
  const toHost: Uint8Array[] = [];
  const toPeer: Uint8Array[] = [];
  const served: RemoteRequest[] = [];
  const peer = new SecureChannel(peerKeys, (f) => toHost.push(f));
  const host = new SecureChannel(
    hostKeys,
    (f) => toPeer.push(f),
    async (r) => (served.push(r), { status: 200, body: `ok ${r.path}` }),
  );
  const flush = async (q: Uint8Array[], to: SecureChannel) => {
    while (q.length) await to.receive(q.shift()! as never);
  };
  /** Sealing is asynchronous: waits until `q` holds `n` frames. */
  const settle = (q: Uint8Array[], n = 1) => until(() => (q.length >= n ? true : undefined), `${n} sealed frames`);
  return { peer, host, toHost, toPeer, served, flush, settle };
}

describe("handshake", () => {
  it("agrees on keys, proves both static keys and carries each end's metadata", async () => {
    const { meta, peerStatic, peer } = await pair();
    expect(meta).toEqual({ who: "host" });
    expect(Buffer.from(peerStatic).equals(Buffer.from(peer.publicKey))).toBe(true);
  });

  it("fails closed on a wrong pre-shared secret, a changed prologue (offer) or a wrong peer key", async () => {
    await expect(pair({ pskI: randomBytes(32) })).rejects.toThrow(/did not authenticate/);
    await expect(pair({ prologueI: "p (altered)" })).rejects.toThrow(/did not authenticate/);
    await expect(pair({ expectPeer: (await generateKeyPair()).publicKey })).rejects.toThrow(/wrong peer key/);
  });

  it("fails closed when the answer comes from another key (a broker playing the daemon)", async () => {
    const host = await generateKeyPair();
    const impostor = await generateKeyPair();
    const peer = await generateKeyPair();
    const psk = randomBytes(32);
    const hs = await initiate({ prologue: "p", psk, staticKey: peer, remoteStatic: host.publicKey, meta: null });
    await expect(
      respond({ prologue: "p", psk, staticKey: impostor, msg1: hs.msg1, meta: null, accept: () => undefined }),
    ).rejects.toThrow(HandshakeError);
  });
});

describe("secure channel", () => {
  it("carries requests and answers in order", async () => {
    const w = await wired();
    const answer = w.peer.request({ method: "GET", path: "/sentinels" });
    await w.settle(w.toHost);
    await w.flush(w.toHost, w.host);
    await w.settle(w.toPeer);
    await w.flush(w.toPeer, w.peer);
    expect(await answer).toEqual({ status: 200, body: "ok /sentinels" });
    expect(w.served.map((r) => r.path)).toEqual(["/sentinels"]);
  });

  it("closes on a replayed frame", async () => {
    const w = await wired();
    void w.peer.request({ method: "GET", path: "/a" }).catch(() => undefined);
    await w.settle(w.toHost);
    const frame = w.toHost[0]!;
    await w.flush(w.toHost, w.host);
    await expect(w.host.receive(frame as never)).rejects.toThrow(/failed authentication/);
    expect(w.host.closedReason).toMatch(/closed/);
  });

  it("closes on reordered frames", async () => {
    const w = await wired();
    void w.peer.request({ method: "GET", path: "/a" }).catch(() => undefined);
    void w.peer.request({ method: "GET", path: "/b" }).catch(() => undefined);
    await w.settle(w.toHost, 2);
    expect(w.toHost).toHaveLength(2);
    await expect(w.host.receive(w.toHost[1]! as never)).rejects.toThrow(/failed authentication/);
    expect(w.served).toEqual([]);
  });

  it("closes on an injected or altered frame", async () => {
    const w = await wired();
    await expect(w.host.receive(Uint8Array.of(3, ...randomBytes(40)) as never)).rejects.toThrow(
      /failed authentication/,
    );
    const w2 = await wired();
    void w2.peer.request({ method: "GET", path: "/a" }).catch(() => undefined);
    await w2.settle(w2.toHost);
    const f = Uint8Array.from(w2.toHost[0]!);
    f[f.length - 1]! ^= 1;
    await expect(w2.host.receive(f as never)).rejects.toThrow(/failed authentication/);
    // A closed channel stays closed: the genuine frame is not served either.
    expect(w2.served).toEqual([]);
  });

  it("frames carry no plaintext", async () => {
    const w = await wired();
    void w.peer.request({ method: "GET", path: "/sentinels?label=secret-label-42" }).catch(() => undefined);
    await w.settle(w.toHost);
    expect(Buffer.from(w.toHost[0]!).includes(Buffer.from(utf8("secret-label-42")))).toBe(false);
  });
});
