/**
 * The web pair page, in the browser: takes the offer from the URL fragment, pairs with the
 * daemon through the broker (WebCrypto X25519 + HKDF + AES-GCM, the same modules the daemon
 * runs), then opens the new pairing's link and runs the dashboard through it (channel-transport.ts):
 * the same page the daemon serves on loopback, with live updates from its `/events`. The page's
 * key lives only in this tab; the daemon lists the pairing as "pair page".
 */
import { startDashboard } from "../../dashboard/web/dashboard.js";
import { doc, type Elem } from "../../dashboard/web/dom.js";
import { ChannelTransport } from "./channel-transport.js";
import { offerPrologue, parseOffer } from "./offer.js";
import { linkPrologue, pairingFromHandshake } from "./pairing.js";
import { connectAsPeer } from "./peer.js";
import { fromB64u } from "./bytes.js";
import { generateKeyPair } from "./primitives.js";
import type { WsFactory } from "./rendezvous.js";

/** The page's elements by id (the shell in page-html.ts has each one). */
const byId = (id: string): Elem => {
  const el = doc.getElementById(id);
  if (!el) throw new Error(`the pair page has no #${id}`);
  return el;
};
const loc = (globalThis as unknown as { location: { hash: string } }).location;
const WS = (globalThis as unknown as { WebSocket: new (url: string) => unknown }).WebSocket;
const factory: WsFactory = (url) => new WS(url) as ReturnType<WsFactory>;

function status(state: string, text: string): void {
  const el = byId("status");
  el.dataset.state = state;
  el.textContent = text;
}

async function main(): Promise<void> {
  if (!loc.hash || loc.hash.length < 2)
    return status("error", "No offer in this page's URL. Open the link that `svc pair offer --qr` prints.");
  const offer = await parseOffer(loc.hash);
  if (Date.now() > offer.expiresAt)
    return status(
      "error",
      `This offer expired at ${new Date(offer.expiresAt).toISOString()}. Make a new one with \`svc pair offer --qr\`.`,
    );
  status("pairing", `Pairing with daemon ${offer.fingerprint}…`);
  const key = await generateKeyPair();
  const first = await connectAsPeer({
    factory,
    rendezvous: offer.rendezvous,
    channel: offer.channel,
    prologue: offerPrologue(offer),
    psk: offer.secret,
    staticKey: key,
    remoteStatic: offer.publicKey,
    meta: { label: "pair page" },
    mustFind: true,
  });
  first.socket.close("paired");
  const record = await pairingFromHandshake(
    first.keys,
    offer.publicKey,
    "peer",
    "daemon",
    offer.rendezvous,
    Date.now(),
  );
  const openLink = () =>
    connectAsPeer({
      factory,
      rendezvous: offer.rendezvous,
      channel: record.channel,
      prologue: linkPrologue(record.id),
      psk: fromB64u(record.secret)!,
      staticKey: key,
      remoteStatic: offer.publicKey,
      meta: { label: "pair page" },
    });
  const relay = new URL(offer.rendezvous.replace(/^ws/, "http")).host;
  const connected = (scope: string) =>
    status(
      "connected",
      `Paired with daemon ${offer.fingerprint} (pairing ${record.id}), end-to-end encrypted; scope ${scope} (the daemon's owner chose it).`,
    );
  const transport = new ChannelTransport({
    label: `daemon ${offer.fingerprint} through ${relay}`,
    link: await openLink(),
    reconnect: openLink,
    // The scope the daemon's owner gave this pairing, as the daemon said in the handshake.
    scope: (first.meta as { scope?: unknown } | undefined)?.scope === "operate" ? "operate" : "read",
    onState: (state, detail) =>
      state === "connected"
        ? connected(transport.scope)
        : status("reconnecting", `The link to daemon ${offer.fingerprint} was lost (${detail}); reconnecting…`),
  });
  connected(transport.scope);
  // For the console (and the browser test): `await svcDashboard.request("GET", "/sessions")`, as the pairing.
  (globalThis as { svcDashboard?: ChannelTransport }).svcDashboard = transport;
  // The status line counts the events that arrive through the link (the dashboard shares the stream).
  let events = 0;
  transport.subscribe((e) => {
    const el = byId("status");
    el.dataset.events = String(++events);
    el.dataset.lastEvent = e.type;
  });
  byId("daemon").textContent = `Daemon ${offer.fingerprint} through ${relay}`;
  try {
    await startDashboard(byId("dashboard"), transport);
  } catch (err) {
    return status("error", `Paired, but the dashboard could not load through the link: ${(err as Error).message}`);
  }
  byId("daemon").dataset.loaded = "true";
}

main().catch((err: Error) => status("error", `Pairing failed: ${err.message}`));
