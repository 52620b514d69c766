/** `svc pair offer|accept|ls|rm`: thin clients of the daemon's pairing routes. */
import QRCode from "qrcode";
import { DaemonClient } from "../../cli/daemon-client.js";
import { parseDurationFlag } from "../../cli/duration.js";
import { TTL_FLAG } from "../../cli/duration-flags.js";
import { printJson, printTable, println, usageError, useColor } from "../../cli/output.js";
import { isPairPage, pairPageUrl } from "../../config/pairing.js";
import { confirm } from "../../cli/confirm.js";
import type { PairingView } from "../pairing/service.js";

interface OfferOptions {
  qr?: boolean;
  rendezvous?: string;
  pairPage?: string;
  ttl?: string;
  label?: string;
  scope?: string;
  yes?: boolean;
  json?: boolean;
}

/** The operate scope is confirmed by the person on the daemon's side (asked, or `--yes`). */
async function grantScope(
  scope: string | undefined,
  who: string,
  yes: boolean | undefined,
): Promise<"read" | "operate"> {
  if (scope === undefined || scope === "read") return "read";
  if (scope !== "operate") throw usageError(`--scope must be read or operate (got ${JSON.stringify(scope)})`);
  await confirm(
    `Let ${who} start, prompt and stop agent sessions, watch events and run swarms here, under pairing.allowedRoots`,
    { yes },
  );
  return "operate";
}

/** The pair page URL for an offer: the template's `{fp}` filled, the offer in the fragment. */
export function pairPageLink(template: string, fingerprint: string, offerUrl: string): string {
  return `${pairPageUrl(template, fingerprint).split("#")[0]}#offer=${encodeURIComponent(offerUrl)}`;
}

export async function pairOffer(o: OfferOptions): Promise<void> {
  if (o.pairPage !== undefined && !o.qr)
    throw usageError("--pair-page chooses the page that --qr prints: pass --qr with it, or leave --pair-page out");
  if (o.pairPage !== undefined && !isPairPage(o.pairPage))
    throw usageError(
      `--pair-page must be a plain http(s) URL, or a template with {fp} in the hostname only (got ${JSON.stringify(o.pairPage)})`,
    );
  if (o.rendezvous !== undefined && !/^wss?:\/\/[^\s/?#]+\S*$/.test(o.rendezvous))
    throw usageError(`--rendezvous must be a ws:// or wss:// URL (got ${JSON.stringify(o.rendezvous)})`);
  const ttlMs = o.ttl === undefined ? undefined : parseDurationFlag(o.ttl, TTL_FLAG);
  const scope = await grantScope(o.scope, "the device that accepts this offer", o.yes);
  const client = await DaemonClient.connect();
  const r = await client.request<{
    url: string;
    fingerprint: string;
    expiresAt: number;
    rendezvous: string;
    pairPage: string;
    scope: string;
  }>("POST", "/pairing/offers", {
    scope,
    ...(o.rendezvous !== undefined ? { rendezvous: o.rendezvous } : {}),
    ...(ttlMs !== undefined ? { ttlMs } : {}),
    ...(o.label !== undefined ? { label: o.label } : {}),
  });
  const page = o.qr ? pairPageLink(o.pairPage ?? r.pairPage, r.fingerprint, r.url) : undefined;
  if (o.json)
    return printJson({
      offer: r.url,
      fingerprint: r.fingerprint,
      expiresAt: new Date(r.expiresAt).toISOString(),
      rendezvous: r.rendezvous,
      scope: r.scope,
      ...(page ? { pairPage: page } : {}),
    });
  println(
    `Pairing offer from daemon ${r.fingerprint}, valid until ${new Date(r.expiresAt).toISOString()} (one use), scope ${r.scope}:`,
  );
  println(r.url);
  println();
  // Coloured blocks on a terminal; plain UTF-8 blocks when piped or with NO_COLOR.
  println(await QRCode.toString(page ?? r.url, useColor() ? { type: "terminal", small: true } : { type: "utf8" }));
  if (page) println(`Pair page: ${page}`);
  println(`On the other machine: svc pair accept '<the svc://pair?… URL>'`);
}

export async function pairAccept(offer: string, o: { label?: string; json?: boolean }): Promise<void> {
  const client = await DaemonClient.connect();
  const p = await client.request<PairingView>("POST", "/pairing/accept", {
    offer,
    ...(o.label ? { label: o.label } : {}),
  });
  if (o.json) return printJson(p);
  println(
    `Paired with daemon ${p.peerFingerprint} (${p.label}): pairing ${p.id}, scope ${p.scope} (${p.scope === "operate" ? "its owner lets this end operate there" : "this end may read there; its owner can grant operate with `svc pair scope`"})`,
  );
  println(`Run verbs there with: svc --remote ${p.id} sentinel list`);
}

export async function pairList(o: { json?: boolean }): Promise<void> {
  const { pairings } = await (await DaemonClient.connect()).request<{ pairings: PairingView[] }>("GET", "/pairings");
  if (o.json) return printJson({ pairings });
  if (pairings.length === 0)
    return println("No pairings. Make one with `svc pair offer`, accept it elsewhere with `svc pair accept`.");
  printTable(
    ["ID", "ROLE", "SCOPE", "LABEL", "PEER", "STATE", "SINCE", "LAST ERROR"],
    pairings.map((p) => [
      p.id,
      p.role,
      p.scope,
      p.label,
      p.peerFingerprint,
      p.link.state,
      new Date(p.link.since).toISOString(),
      p.link.lastError ?? "",
    ]),
  );
}

export async function pairScope(id: string, scope: string, o: { yes?: boolean; json?: boolean }): Promise<void> {
  if (scope !== "read" && scope !== "operate")
    throw usageError(`the scope must be read or operate (got ${JSON.stringify(scope)})`);
  const granted = await grantScope(scope, `pairing ${id}`, o.yes);
  const p = await (await DaemonClient.connect()).request<PairingView>(
    "POST",
    `/pairings/${encodeURIComponent(id)}/scope`,
    { scope: granted },
  );
  if (o.json) return printJson(p);
  println(`Pairing ${p.id} (${p.label}) now has the ${p.scope} scope; its next request has it.`);
}

export async function pairRemove(id: string, o: { json?: boolean }): Promise<void> {
  await (await DaemonClient.connect()).request("DELETE", `/pairings/${encodeURIComponent(id)}`);
  if (o.json) return printJson({ removed: id });
  println(`Removed pairing ${id}. Remove it on the other end too (svc pair rm ${id} there).`);
}
