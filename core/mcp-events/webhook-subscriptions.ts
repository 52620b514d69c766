/**
 * Webhook subscriptions (`events/subscribe`, `events/unsubscribe`): each one IS a webhook
 * sentinel, created through the engine (so it has the same challenge, outbox, signing, SSRF gate,
 * retries, replay and redaction, and `svc sentinel list` shows it, labelled with its subscription
 * id), plus a record in {@link SubscriptionStore} with its key and expiry.
 *
 * Write-ahead: the record is written (without a sentinel) before the sentinel is created, and
 * removed after it when unsubscribing or lapsing, so a crash between the two leaves nothing
 * unexplained: {@link reconcile} (at load) adopts or drops a record left without its sentinel, and
 * removes a sentinel svc made for a subscription that has no record.
 */
import { SvcError } from "../errors.js";
import type { Clock } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { KeyedMutex } from "../sentinels/keyed-mutex.js";
import type { SentinelService } from "../sentinels/service.js";
import type { SentinelView } from "../plugin-api/context.js";
import type { EventCatalog } from "./catalog-types.js";
import { deliveryStatusOf, type DeliveryStatus } from "./delivery-status.js";
import { resolveEventType } from "./event-types.js";
import { MCP_EVENTS_LIMITS as L } from "./limits.js";
import { asEventsError, exhausted } from "./rpc-errors.js";
import { SUBSCRIPTION_ID, normalizeCallbackUrl, subscriptionId } from "./subscription-id.js";
import type { StoreRead, SubscriptionRecord, SubscriptionStore } from "./subscription-store.js";
import { grantExpiry } from "./ttl.js";
import { checkWebhookSecret } from "./webhook-secret.js";

export interface SubscribeInput {
  name: string;
  arguments?: Record<string, unknown>;
  url: unknown;
  secret: unknown;
  /** Absent: the default TTL; null: no expiry. */
  ttlMs?: unknown;
}

export interface UnsubscribeInput {
  name: string;
  arguments?: Record<string, unknown>;
  url: unknown;
}

export interface SubscribeResult {
  id: string;
  /** ISO 8601, or null: no expiry. */
  refreshBefore: string | null;
  /** Always null: webhook deliveries have no replay (the outbox keeps each accepted event until delivered). */
  cursor: null;
  truncated: false;
  deliveryStatus: DeliveryStatus;
  /** The sentinel that delivers it (`svc sentinel status <id>`). */
  sentinelId: string;
}

export interface WebhookSubscriptionDeps {
  store: SubscriptionStore;
  /** How the store read at open: orphan sentinels are removed only after an `ok` read. */
  storeRead: StoreRead;
  sentinels: SentinelService;
  catalog: () => EventCatalog;
  clock: Clock;
  logger: Logger;
}

export class WebhookSubscriptions {
  private readonly mutex = new KeyedMutex();

  constructor(private readonly deps: WebhookSubscriptionDeps) {}

  async subscribe(principalKey: string, input: SubscribeInput): Promise<SubscribeResult> {
    const url = normalizeCallbackUrl(input.url);
    const secret = checkWebhookSecret(input.secret);
    grantExpiry(input.ttlMs, 0); // refuses an invalid ttlMs before anything is sent
    const args = input.arguments ?? {};
    const resolved = await resolveEventType(this.deps.catalog(), input.name, args);
    const id = subscriptionId({ principalKey, url, name: input.name, arguments: args });
    const target = { kind: "webhook", url, secret, mcp: { subscriptionId: id, eventName: input.name } };
    return this.mutex.run(id, async () => {
      const rec = this.deps.store.get(id);
      const live = rec?.sentinelId ? this.deps.sentinels.get(rec.sentinelId) : undefined;
      if (rec && live) {
        // The sketch: a refresh answering `active: false` tells the client delivery had been
        // suspended, and that this refresh has just reactivated it.
        const before = deliveryStatusOf((await this.deps.sentinels.project(live.id)).spec.target);
        await this.deps.sentinels
          .refreshTarget(live.id, target, principalKey)
          .catch((err: unknown) => Promise.reject(asEventsError(err)));
        const now = this.deps.clock.now();
        const expiresAt = grantExpiry(input.ttlMs, now);
        await this.deps.store.put({ ...rec, expiresAt, refreshedAt: now });
        return this.answer(id, live.id, expiresAt, before.active ? undefined : before);
      }
      const spec = { match: resolved.match, provider: resolved.provider, until: { kind: "never" }, target, label: id };
      const created = await this.create(
        { id, principalKey, name: input.name, arguments: args, url, counted: rec !== undefined },
        spec,
        input.ttlMs,
      );
      return this.answer(id, created.sentinelId!, created.expiresAt);
    });
  }

  /** Idempotent: a key with no subscription answers the same as one removed now. */
  async unsubscribe(principalKey: string, input: UnsubscribeInput): Promise<void> {
    const url = normalizeCallbackUrl(input.url);
    const id = subscriptionId({ principalKey, url, name: input.name, arguments: input.arguments ?? {} });
    await this.mutex.run(id, () => this.drop(id, "unsubscribed"));
  }

  /** Removes every subscription whose expiry has passed (and its sentinel); returns their ids. */
  async sweep(): Promise<string[]> {
    const lapsed = (r: SubscriptionRecord | undefined) =>
      r !== undefined && r.expiresAt !== null && r.expiresAt <= this.deps.clock.now();
    const gone: string[] = [];
    for (const rec of this.deps.store.all().filter(lapsed)) {
      await this.mutex.run(rec.id, async () => {
        if (!lapsed(this.deps.store.get(rec.id))) return;
        await this.drop(rec.id, "lapsed");
        gone.push(rec.id);
      });
    }
    return gone;
  }

  /** A sentinel was removed (e.g. `svc sentinel unwatch`): its subscription's record goes too. */
  async sentinelRemoved(sentinelId: string): Promise<void> {
    const rec = this.deps.store.all().find((r) => r.sentinelId === sentinelId);
    if (!rec) return;
    await this.mutex.run(rec.id, async () => {
      const now = this.deps.store.get(rec.id);
      if (now?.sentinelId !== sentinelId || this.deps.sentinels.get(sentinelId)) return;
      await this.deps.store.delete(rec.id);
      this.deps.logger.info("MCP subscription ended: its sentinel was removed", {
        subscription: rec.id,
        sentinel: sentinelId,
      });
    });
  }

  /**
   * At load: a record written ahead of a sentinel that was then made adopts it (else goes), a
   * record whose sentinel is gone goes, and a sentinel svc made for a subscription without a
   * record is removed (only when the records read whole: a missing or damaged file keeps them).
   */
  async reconcile(): Promise<{ adopted: number; dropped: number; orphansRemoved: number }> {
    const { store, sentinels } = this.deps;
    const made = new Map<string, string[]>();
    // Subscriptions' sentinels never expire (`until: never`): the active ones are all of them.
    for (const view of sentinels.active()) {
      const label = view.spec.label;
      if (label && madeFor(view, label)) made.set(label, [...(made.get(label) ?? []), view.id]);
    }
    let adopted = 0;
    let dropped = 0;
    for (const rec of store.all()) {
      const mine = made.get(rec.id) ?? [];
      if (rec.sentinelId === null && mine.length > 0) {
        await store.put({ ...rec, sentinelId: mine[0]! });
        adopted++;
      } else if (rec.sentinelId === null || !sentinels.get(rec.sentinelId)) {
        await store.delete(rec.id);
        dropped++;
      }
    }
    const orphans = [...made].flatMap(([id, ids]) => ids.filter((s) => store.get(id)?.sentinelId !== s));
    if (orphans.length > 0 && this.deps.storeRead !== "ok") {
      this.deps.logger.warn(
        "sentinels made for MCP subscriptions have no subscription record (the record file is missing or damaged); kept",
        { sentinels: orphans.join(", ") },
      );
      return { adopted, dropped, orphansRemoved: 0 };
    }
    for (const s of orphans) await sentinels.remove(s).catch(ignoreNotFound);
    if (adopted + dropped + orphans.length > 0)
      this.deps.logger.info("MCP subscriptions reconciled with their sentinels", {
        adopted,
        dropped,
        orphansRemoved: orphans.length,
      });
    return { adopted, dropped, orphansRemoved: orphans.length };
  }

  private async create(
    key: {
      id: string;
      principalKey: string;
      name: string;
      arguments: Record<string, unknown>;
      url: string;
      counted: boolean;
    },
    spec: Record<string, unknown>,
    ttlMs: unknown,
  ): Promise<SubscriptionRecord> {
    const { store, sentinels, clock } = this.deps;
    const now = clock.now();
    const pending: SubscriptionRecord = {
      id: key.id,
      sentinelId: null,
      principalKey: key.principalKey,
      name: key.name,
      arguments: key.arguments,
      url: key.url,
      expiresAt: grantExpiry(ttlMs, now),
      createdAt: now,
      refreshedAt: now,
    };
    // The count and the record written ahead, together, so parallel creates cannot pass the cap.
    await this.mutex.run(`principal:${key.principalKey}`, async () => {
      const max = L.subscriptionsPerPrincipal;
      if (!key.counted && store.countFor(key.principalKey) >= max) {
        throw exhausted(
          "subscriptions",
          max,
          `this caller has ${max} webhook subscriptions, the most svc keeps per caller: unsubscribe some first`,
        );
      }
      await store.put(pending);
    });
    let sentinelId: string;
    try {
      sentinelId = (await sentinels.create(spec, key.principalKey)).id;
    } catch (err) {
      await store.delete(key.id).catch((e: Error) =>
        this.deps.logger.error("could not remove a subscription record after its sentinel failed", {
          subscription: key.id,
          error: e.message,
        }),
      );
      throw asEventsError(err);
    }
    const done = { ...pending, sentinelId };
    try {
      await store.put(done);
    } catch (err) {
      await sentinels.remove(sentinelId).catch(ignoreNotFound);
      throw err;
    }
    this.deps.logger.info("MCP subscription created", { subscription: key.id, sentinel: sentinelId, event: key.name });
    return done;
  }

  private async drop(id: string, why: "unsubscribed" | "lapsed"): Promise<void> {
    const rec = this.deps.store.get(id);
    if (!rec) return;
    if (rec.sentinelId && this.deps.sentinels.get(rec.sentinelId))
      await this.deps.sentinels.remove(rec.sentinelId).catch(ignoreNotFound);
    await this.deps.store.delete(id);
    this.deps.logger.info(`MCP subscription ${why}`, { subscription: id, sentinel: rec.sentinelId });
  }

  /** `suspended`: the status before a refresh that resumed delivery (shown instead of the fresh one). */
  private async answer(
    id: string,
    sentinelId: string,
    expiresAt: number | null,
    suspended?: DeliveryStatus,
  ): Promise<SubscribeResult> {
    const deliveryStatus = suspended ?? deliveryStatusOf((await this.deps.sentinels.project(sentinelId)).spec.target);
    return {
      id,
      refreshBefore: expiresAt === null ? null : new Date(expiresAt).toISOString(),
      cursor: null,
      truncated: false,
      deliveryStatus,
      sentinelId,
    };
  }
}

/** Whether svc made this sentinel for subscription `label`: a webhook target carrying it as `mcp.subscriptionId`. */
function madeFor(view: SentinelView | undefined, label: string): boolean {
  if (!view || !SUBSCRIPTION_ID.test(label) || view.spec.target.kind !== "webhook") return false;
  const mcp = (view.spec.target as { mcp?: { subscriptionId?: unknown } }).mcp;
  return mcp?.subscriptionId === label;
}

function ignoreNotFound(err: unknown): void {
  if (!(SvcError.is(err) && err.code === "not_found")) throw err;
}
