/**
 * The web pair page, in the browser: takes the offer from the URL fragment, pairs with the
 * daemon through the broker (WebCrypto X25519 + HKDF + AES-GCM, the same modules the daemon
 * runs), then opens the new pairing's link and shows the daemon's sessions and sentinels. The
 * page's key lives only in this tab; the daemon lists the pairing as "pair page".
 */
import type { RemoteResponse } from "./channel.js";
import { offerPrologue, parseOffer } from "./offer.js";
import { linkPrologue, pairingFromHandshake } from "./pairing.js";
import { connectAsPeer } from "./peer.js";
import { fromB64u } from "./bytes.js";
import { generateKeyPair } from "./primitives.js";
import type { WsFactory } from "./rendezvous.js";

interface El {
  textContent: string | null;
  dataset: Record<string, string>;
  appendChild(c: El): El;
  replaceChildren(...c: El[]): void;
}
const doc = (
  globalThis as unknown as {
    document: { getElementById(id: string): El; createElement(t: string): El };
    location: { hash: string };
  }
).document;
const loc = (globalThis as unknown as { location: { hash: string } }).location;
const WS = (globalThis as unknown as { WebSocket: new (url: string) => unknown }).WebSocket;
const factory: WsFactory = (url) => new WS(url) as ReturnType<WsFactory>;

function status(state: string, text: string): void {
  const el = doc.getElementById("status");
  el.dataset.state = state;
  el.textContent = text;
}

function fill(tableId: string, headers: string[], rows: string[][]): void {
  const body = doc.getElementById(tableId);
  const tr = (cells: string[], tag: string) => {
    const row = doc.createElement("tr");
    for (const c of cells) {
      const cell = doc.createElement(tag);
      cell.textContent = c;
      row.appendChild(cell);
    }
    return row;
  };
  body.replaceChildren(tr(headers, "th"), ...(rows.length ? rows.map((r) => tr(r, "td")) : [tr(["(none)"], "td")]));
}

function json(r: RemoteResponse): Record<string, unknown> {
  if (r.status >= 400) throw new Error(`the daemon answered ${r.status}: ${r.body.slice(0, 200)}`);
  return JSON.parse(r.body) as Record<string, unknown>;
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
  const link = await connectAsPeer({
    factory,
    rendezvous: offer.rendezvous,
    channel: record.channel,
    prologue: linkPrologue(record.id),
    psk: fromB64u(record.secret)!,
    staticKey: key,
    remoteStatic: offer.publicKey,
    meta: { label: "pair page" },
  });
  // The scope the daemon's owner gave this pairing, as the daemon said in the handshake.
  const scope = (first.meta as { scope?: unknown } | undefined)?.scope === "operate" ? "operate" : "read";
  status(
    "connected",
    `Paired with daemon ${offer.fingerprint} (pairing ${record.id}), end-to-end encrypted; scope ${scope} (the daemon's owner chose it).`,
  );
  doc.getElementById("daemon").textContent =
    `Daemon ${offer.fingerprint} through ${new URL(offer.rendezvous.replace(/^ws/, "http")).host}`;
  const sessions = (json(await link.channel.request({ method: "GET", path: "/sessions" })).sessions ?? []) as Array<
    Record<string, unknown>
  >;
  fill(
    "sessions",
    ["ID", "ADAPTER", "STATE"],
    sessions.map((s) => [String(s.id ?? ""), String(s.adapter ?? ""), String(s.state ?? s.status ?? "")]),
  );
  const sentinels = (json(await link.channel.request({ method: "GET", path: "/sentinels" })).sentinels ?? []) as Array<
    Record<string, unknown>
  >;
  fill(
    "sentinels",
    ["ID", "LABEL", "STATUS"],
    sentinels.map((s) => [
      String(s.id ?? ""),
      String((s.spec as { label?: string })?.label ?? ""),
      String(s.status ?? ""),
    ]),
  );
  doc.getElementById("daemon").dataset.loaded = "true";
}

main().catch((err: Error) => status("error", `Pairing failed: ${err.message}`));
