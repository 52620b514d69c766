/**
 * The daemon's pairings: offers, accepting an offer, the persisted pairings with one standing
 * link each (opened at boot when `pairing.autoconnect`), removal, and calls through a link.
 */
import { hostname } from "node:os";
import { SvcError } from "../../errors.js";
import type { Identity } from "../identity.js";
import type { RemoteRequest, RemoteResponse, Serve } from "../web/channel.js";
import { HandshakeError } from "../web/handshake.js";
import { OfferError, offerPrologue, parseOffer } from "../web/offer.js";
import { connectAsPeer } from "../web/peer.js";
import { RendezvousError } from "../web/rendezvous.js";
import { pairingFromHandshake } from "../web/pairing.js";
import { openOffer, type PendingOffer } from "./offers.js";
import { StandingLink, wsFactory, type LinkStatus } from "./standing-link.js";
import type { PairingRecord, PairingStore } from "./store.js";
import type { RemoteScope } from "../../daemon/principal.js";

export interface PairingServiceDeps {
  identity: Identity;
  store: PairingStore;
  now: () => number;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  serve: (pairingId: string) => Serve;
  autoconnect: () => boolean;
}

export interface PairingView {
  id: string;
  role: "host" | "peer";
  label: string;
  peerFingerprint: string;
  rendezvous: string;
  createdAt: number;
  /** Role host: what the peer may do here. Role peer: what the other daemon lets this end do there. */
  scope: RemoteScope;
  link: LinkStatus;
}

const MAX_PENDING_OFFERS = 16;

export class PairingService {
  private readonly links = new Map<string, StandingLink>();
  private readonly offers = new Map<string, PendingOffer>();

  constructor(private readonly deps: PairingServiceDeps) {}

  async start(): Promise<void> {
    for (const p of await this.deps.store.list()) this.addLink(p, this.deps.autoconnect());
  }

  stop(): void {
    for (const l of this.links.values()) l.stop();
    for (const o of this.offers.values()) o.close();
    this.links.clear();
    this.offers.clear();
  }

  async offer(
    rendezvous: string,
    ttlMs: number,
    label: string,
    scope: RemoteScope = "read",
  ): Promise<{ url: string; fingerprint: string; expiresAt: number; rendezvous: string; scope: RemoteScope }> {
    // Only offers still waiting on their channel count toward the cap.
    for (const [k, o] of this.offers)
      if (o.closed || o.offer.expiresAt < this.deps.now()) o.close(), this.offers.delete(k);
    if (this.offers.size >= MAX_PENDING_OFFERS)
      throw new SvcError(
        "conflict",
        `${MAX_PENDING_OFFERS} offers are already waiting; let one expire or restart the daemon`,
      );
    const pending = await openOffer(
      {
        key: this.deps.identity.key,
        fingerprint: this.deps.identity.fingerprint,
        store: this.deps.store,
        now: this.deps.now,
        log: this.deps.log,
        onPaired: (p) => (this.offers.delete(pending.offer.channel), this.addLink(p, true)),
      },
      rendezvous,
      ttlMs,
      label,
      scope,
    );
    this.offers.set(pending.offer.channel, pending);
    return {
      url: pending.url,
      fingerprint: pending.offer.fingerprint,
      expiresAt: pending.offer.expiresAt,
      rendezvous,
      scope,
    };
  }

  async accept(text: string, label = hostname()): Promise<PairingView> {
    let offer;
    try {
      offer = await parseOffer(text);
    } catch (err) {
      if (err instanceof OfferError) throw new SvcError("invalid_input", err.message);
      throw err;
    }
    if (this.deps.now() > offer.expiresAt) {
      throw new SvcError(
        "invalid_input",
        `the pairing offer expired at ${new Date(offer.expiresAt).toISOString()}; make a new one with \`svc pair offer\``,
      );
    }
    if (offer.fingerprint === this.deps.identity.fingerprint)
      throw new SvcError("invalid_input", "this offer is this daemon's own: accept it from another svc home");
    let link;
    try {
      link = await connectAsPeer({
        factory: wsFactory,
        rendezvous: offer.rendezvous,
        channel: offer.channel,
        prologue: offerPrologue(offer),
        psk: offer.secret,
        staticKey: this.deps.identity.key,
        remoteStatic: offer.publicKey,
        meta: { fingerprint: this.deps.identity.fingerprint, label },
        timeoutMs: 10_000,
        mustFind: true,
      });
    } catch (err) {
      if (err instanceof HandshakeError) throw new SvcError("forbidden", `pairing refused: ${err.message}`);
      if (err instanceof RendezvousError) {
        throw new SvcError("connect", `pairing failed: ${err.message}`);
      }
      throw err;
    }
    link.socket.close("paired");
    const meta = (link.meta ?? {}) as { label?: unknown; scope?: unknown };
    const record: PairingRecord = {
      ...(await pairingFromHandshake(
        link.keys,
        offer.publicKey,
        "peer",
        typeof meta.label === "string" ? meta.label : offer.fingerprint,
        offer.rendezvous,
        this.deps.now(),
      )),
      // What the other daemon's owner lets this end do there (as it said in the handshake).
      ...(meta.scope === "operate" || meta.scope === "read" ? { scope: meta.scope } : {}),
    };
    await this.deps.store.add(record);
    this.addLink(record, true);
    return this.view(record);
  }

  async list(): Promise<PairingView[]> {
    return (await this.deps.store.list()).map((p) => this.view(p));
  }

  /** Gives a pairing this daemon serves (role host) a scope; its link keeps running and its next request has it. */
  async setScope(id: string, scope: RemoteScope): Promise<PairingView> {
    const link = this.links.get(id) ?? this.findByPrefix(id);
    const fullId = link?.record.id ?? id;
    const current = (await this.deps.store.list()).find((p) => p.id === fullId);
    if (!current) throw new SvcError("not_found", `no pairing ${id} (see \`svc pair ls\`)`);
    if (current.role !== "host")
      throw new SvcError(
        "invalid_input",
        `pairing ${fullId} is one this home accepted: its scope is set by the daemon that offered it`,
      );
    const changed = (await this.deps.store.setScope(fullId, scope))!;
    if (link) link.record = changed;
    this.deps.log("pairing scope set", { pairing: fullId, scope });
    return this.view(changed);
  }

  /** What requests through pairing `id` may do here: its scope, read when it has none. */
  scopeOf(id: string): RemoteScope {
    return this.links.get(id)?.record.scope ?? "read";
  }

  async remove(id: string): Promise<void> {
    const removed = await this.deps.store.remove(id);
    if (!removed) throw new SvcError("not_found", `no pairing ${id} (see \`svc pair ls\`)`);
    this.links.get(id)?.stop();
    this.links.delete(id);
  }

  async call(id: string, r: RemoteRequest, timeoutMs = 60_000): Promise<RemoteResponse> {
    const link = this.links.get(id) ?? this.findByPrefix(id);
    if (!link) throw new SvcError("not_found", `no pairing ${id} (see \`svc pair ls\`)`);
    if (link.record.role !== "peer")
      throw new SvcError(
        "invalid_input",
        `pairing ${link.record.id} is one this daemon offered: run verbs from the other end`,
      );
    try {
      return await link.request(r, 15_000, timeoutMs);
    } catch (err) {
      throw new SvcError("unavailable", (err as Error).message);
    }
  }

  private findByPrefix(id: string): StandingLink | undefined {
    const hits = [...this.links.values()].filter((l) => l.record.id.startsWith(id) || l.record.label === id);
    return hits.length === 1 ? hits[0] : undefined;
  }

  private addLink(p: PairingRecord, start: boolean): void {
    this.links.get(p.id)?.stop();
    const link = new StandingLink(p, {
      key: this.deps.identity.key,
      fingerprint: this.deps.identity.fingerprint,
      now: this.deps.now,
      serve: this.deps.serve(p.id),
      log: this.deps.log,
    });
    this.links.set(p.id, link);
    if (start) link.start();
  }

  private view(p: PairingRecord): PairingView {
    const link = this.links.get(p.id);
    return {
      id: p.id,
      role: p.role,
      label: p.label,
      peerFingerprint: p.peerFingerprint,
      rendezvous: p.rendezvous,
      createdAt: p.createdAt,
      scope: p.scope ?? "read",
      link: link?.status ?? { state: "off", since: p.createdAt, attempts: 0 },
    };
  }
}
