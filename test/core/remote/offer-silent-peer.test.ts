/**
 * A client that joins a pending offer's channel and sends nothing would keep it busy for the
 * real peer: the offering end drops it once its silence runs out, and the real
 * PairingService.accept then pairs. Real relay, real WebSockets, real pairing stores on disk.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { loadIdentity } from "../../../core/remote/identity.js";
import { openOffer, type PendingOffer } from "../../../core/remote/pairing/offers.js";
import { PairingService } from "../../../core/remote/pairing/service.js";
import { PairingStore } from "../../../core/remote/pairing/store.js";
import { startRelay, type RunningRelay } from "../../../core/remote/relay/relay-server.js";
import { makeTempHome } from "../../support/cli.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const until = async (what: string, cond: () => boolean) => {
  const end = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

async function home(): Promise<string> {
  const h = await makeTempHome("svc-offer-");
  cleanups.push(h.cleanup);
  return h.home;
}

describe("a silent peer on an offer's channel", { timeout: 60_000 }, () => {
  it("is dropped when its silence runs out; the real accept then pairs", async () => {
    const relay: RunningRelay = await startRelay({ port: 0, bind: "127.0.0.1" });
    cleanups.push(() => relay.close());
    const offering = await home();
    const logs: string[] = [];
    const paired: string[] = [];
    const pending: PendingOffer = await openOffer(
      {
        key: (await loadIdentity(offering)).key,
        fingerprint: (await loadIdentity(offering)).fingerprint,
        store: new PairingStore(offering, Date.now),
        now: Date.now,
        log: (m, f) => logs.push(`${m} ${JSON.stringify(f)}`),
        onPaired: (p) => paired.push(p.id),
        peerSilenceMs: 300,
      },
      relay.url,
      600_000,
      "silent test",
      "read",
    );
    cleanups.push(() => pending.close());

    const ws = new WebSocket(`${relay.url}/channel/${pending.offer.channel}?role=peer&wait=0`);
    const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
    cleanups.push(() => ws.terminate());
    expect(await closed).toBe(4403);
    expect(logs.join("\n")).toContain("the peer sent no handshake");
    expect(pending.closed).toBe(false);

    const accepting = await home();
    const svc = new PairingService({
      identity: await loadIdentity(accepting),
      store: new PairingStore(accepting, Date.now),
      now: Date.now,
      log: () => undefined,
      serve: () => async () => ({ status: 200, body: "" }),
      autoconnect: () => false,
    });
    cleanups.push(() => svc.stop());
    const view = await svc.accept(pending.url, "the real peer");
    await until("the offering end to store the pairing", () => paired.length === 1);
    expect(paired).toEqual([view.id]);
  });
});
