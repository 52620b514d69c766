import { z } from "zod";
import type {
  DaemonEventSink,
  PluginContext,
  SentinelIngress,
  SentinelView,
  TargetAck,
  TargetDelivery,
  TargetInstance,
  TargetResumeResult,
} from "../../core/plugin-api/index.js";
import { SvcError, issuesToDetails } from "../../core/plugin-api/index.js";
import { checkSuspendedCallbacks, type CallbackCheck } from "./callback-check.js";
import type { ChallengeVerifier } from "./challenge.js";
import { Dispatcher, MAX_IN_FLIGHT } from "./dispatcher.js";
import { EndpointHealth } from "./endpoint-health.js";
import { LIMITS } from "./limits.js";
import { buildDeliveryBody } from "./envelope.js";
import { checkOutboxFiles } from "./outbox/check.js";
import { Outbox } from "./outbox/outbox.js";
import type { OutboxPort } from "./outbox/port.js";
import type { OutboxRow } from "./outbox/row.js";
import type { TeamOutbox } from "./team/team-outbox.js";
import { resumeDelivery } from "./resume.js";
import { rotateSecret, type RotationResult } from "./rotation.js";
import { asStoredTarget, callbackUrl, type McpSubscription } from "./stored-target.js";
import { webhookTransfer } from "./transfer.js";
import { openVault } from "./open-vault.js";
import type { VaultPort } from "./vault-port.js";
import { checkVaultFile } from "./vault-check.js";
import { replayRows, type ReplayResult, type ReplaySelector } from "./replay.js";

export interface WebhookTargetDeps {
  verifier: ChallengeVerifier;
  /** Reaping tick in ms (default 60 s; 0 disables the timer, tests call `tick()`). */
  tickMs?: number;
  /** Pending rows a suspended sentinel may hold (default {@link LIMITS.suspendedBacklogMax}). */
  suspendedBacklogMax?: number;
}

export interface WebhookTarget extends TargetInstance {
  readonly vault: VaultPort;
  /** Opens the outbox (once) and resumes pending deliveries with their stored bytes. */
  resumeWebhookDeliveries(): Promise<void>;
  /** Reaping and retried acknowledgements (run by the periodic tick). */
  tick(): Promise<void>;
  /** Resolves when no delivery is in progress (tests, bench). */
  idle(): Promise<void>;
  /** The file outbox (file mode; refused in team mode, whose outbox is in PostgreSQL: {@link outboxPort}). */
  outbox(): Promise<Outbox>;
  /** The outbox of either store. */
  outboxPort(): Promise<OutboxPort>;
  /** Sends terminal rows of a sentinel again (see replay.ts). */
  replay(sentinelId: string, selector: ReplaySelector): Promise<ReplayResult>;
  /** Rotates a sentinel's secret (see rotation.ts). */
  rotate(input: { sentinelId: string; secret?: string; principal: string }): Promise<RotationResult>;
  /** Resumes a sentinel's suspended delivery by id (`svc sentinel resume`). */
  resumeById(sentinelId: string): Promise<TargetResumeResult>;
  /** Challenges the suspended sentinels delivering to `url`; resumes those that answer (see callback-check.ts). */
  checkCallbacks(url: string, principal: string): Promise<{ checked: CallbackCheck[] }>;
}

/** What makes the sentinel an MCP events subscription (core/mcp-events gives it). */
const mcpSchema = z.strictObject({
  subscriptionId: z
    .string()
    .regex(/^sub_[0-9a-f]{8,64}$/, "an MCP subscription id is sub_ followed by 8 to 64 lowercase hex digits")
    .describe("the subscription's derived id: the X-MCP-Subscription-Id of every POST"),
  eventName: z
    .string()
    .min(1)
    .max(200)
    .describe("the subscribed MCP event name: the name of every delivered EventOccurrence"),
});

/** Strict: an unknown field (a misspelt `secrets`, a `headers` svc does not send) is refused, not dropped. */
const inputSchema = z.strictObject({
  kind: z.literal("webhook"),
  url: z.string().min(1, "the callback URL is required"),
  secret: z.string().min(1, "a whsec_ secret is required"),
  mcp: mcpSchema
    .optional()
    .describe("present when the sentinel serves an MCP subscription: bodies are EventOccurrences under its id"),
});

const sameMcp = (a: McpSubscription | undefined, b: McpSubscription | undefined) =>
  a?.subscriptionId === b?.subscriptionId && a?.eventName === b?.eventName;

/** How often a team daemon looks for overdue pending rows (team/team-outbox.ts `redrive`). */
const REDRIVE_EVERY_MS = 10_000;

/** The `webhook` target: secrets in the vault, challenge at creation, durable outbox, signed delivery. */
export function createWebhookTarget(ctx: PluginContext, deps: WebhookTargetDeps): WebhookTarget {
  const logger = ctx.logger;
  /** Team mode: the outbox lives in the team's PostgreSQL and deliveries run as the team's jobs. */
  const team = ctx.hasService("teamDatabase");
  // The file vault, or in team mode the sealed secrets in PostgreSQL (team/team-vault.ts).
  const vault = openVault(ctx);
  // Secrets given by a sentinel's author need not look like whsec_…: the redaction floor is told the values.
  if (ctx.hasService("heldSecrets"))
    ctx.service("heldSecrets").add({ name: "webhook-target vault", values: () => vault.values() });
  const sentinels = (): SentinelIngress => ctx.service("sentinels");
  const events = (): DaemonEventSink | undefined => (ctx.hasService("events") ? ctx.service("events") : undefined);
  const health = new EndpointHealth({ sentinels, events, clock: ctx.clock, logger });
  let opened: Promise<Opened> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let redriveTimer: NodeJS.Timeout | undefined;
  let stopped = false;
  let stopWork: (() => Promise<void>) | undefined;
  /** Vault rows created from now on may belong to a creation or rotation in progress: never pruned. */
  const startedAt = ctx.clock.now();

  let openedOutbox: LedgerView | undefined;
  /** The open outbox, for the ledger's synchronous questions (the engine awaits `ledger.ready()` first). */
  const ledgerOutbox = (): LedgerView => {
    if (!openedOutbox) throw new SvcError("unavailable", "the webhook outbox is not open yet");
    return openedOutbox;
  };

  const openOutbox = async (): Promise<{
    outbox: OutboxPort;
    ledger: LedgerView;
    file?: Outbox;
    teamOutbox?: TeamOutbox;
  }> => {
    const now = () => ctx.clock.now();
    const newId = () => `req_${ctx.random.ulid()}`;
    if (team) {
      const { TeamOutbox } = await import("./team/team-outbox.js");
      const db = ctx.service("teamDatabase");
      const outbox = await TeamOutbox.open({ db, jobs: ctx.service("teamJobs"), now, newId, logger });
      return { outbox, ledger: outbox, teamOutbox: outbox };
    }
    const outbox = await Outbox.open({ home: ctx.home, now, newId, logger });
    return { outbox, ledger: outbox, file: outbox };
  };

  const open = () =>
    (opened ??= (async () => {
      const { outbox, ledger, file, teamOutbox } = await openOutbox();
      const dispatcher = new Dispatcher({
        outbox,
        vault,
        egress: ctx.service("egress"),
        sentinels,
        health,
        clock: ctx.clock,
        sleep: ctx.sleep,
        logger,
      });
      health.seed(await outbox.delivered());
      openedOutbox = ledger;
      // Team mode: a row's job (added with the row, or with the record of a failed attempt) starts each attempt.
      const kick = team ? () => undefined : (requestId: string) => dispatcher.enqueue(requestId);
      return { outbox, dispatcher, kick, file, teamOutbox };
    })());

  /** Reaping, repeated acknowledgements, and a safety net re-enqueueing pending rows no attempt holds. */
  const tick = async () => {
    const { outbox, dispatcher } = await open();
    // Rows that aged out are among the unseen terminal ones: acknowledged once, all together (the
    // outbox's group commit shares the durable writes).
    await outbox.reap();
    await Promise.all((await outbox.unseenTerminal()).map((row) => dispatcher.acknowledge(row)));
    if (team) await redrive();
    else for (const row of await outbox.pending()) dispatcher.enqueue(row.requestId);
  };

  /** Team mode's safety net: overdue pending rows get their delivery job again (suspended sentinels' rows wait for their resume). */
  const redrive = async () => {
    const { teamOutbox } = await open();
    await teamOutbox?.redrive((sentinelId) => health.isSuspended(sentinelId));
  };

  /**
   * Removes vault rows that no stored sentinel references as its current or previous secret: what
   * a crash leaves between writing the vault and the sentinel store (a creation, a rotation, a
   * removal). Only rows older than this daemon are considered, so nothing in progress is touched.
   */
  const pruneSecrets = async () => {
    const removed = await vault.prune((ref, row) => {
      if (row.createdAt >= startedAt) return true;
      const stored = asStoredTarget(sentinels().get(row.sentinelId)?.spec.target);
      return stored !== undefined && (stored.secretRef === ref || stored.prevSecretRef === ref);
    });
    if (removed > 0)
      logger.info(
        "removed webhook secrets that no sentinel references (left by an interrupted create, rotation or removal)",
        { removed },
      );
  };

  /**
   * A suspended sentinel keeps at most `suspendedBacklogMax` events waiting: one failing callback
   * must not fill the outbox that every webhook sentinel shares (at the cap new events are
   * refused for all of them). Beyond it the new row is stored dead (`suspended_backlog`): its
   * exact bytes stay for `svc sentinel replay` once the callback is back.
   */
  const boundBacklog = async (outbox: OutboxPort, sentinelId: string, row: OutboxRow): Promise<OutboxRow> => {
    const max = deps.suspendedBacklogMax ?? LIMITS.suspendedBacklogMax;
    const waiting = (await outbox.rowsOf(sentinelId)).filter((r) => r.status === "pending").length;
    if (waiting <= max) return row;
    await outbox.kill(
      row.requestId,
      "suspended_backlog",
      `delivery is suspended and ${max} events of this sentinel already wait; resume it, then send this one with svc sentinel replay`,
    );
    logger.warn("webhook event stored dead: its sentinel's delivery is suspended and its backlog is full", {
      sentinelId,
      eventId: row.eventId,
      max,
    });
    return (await outbox.get(row.requestId)) ?? row;
  };

  /** Adds the event's outbox row (durable when this resolves) and starts or acknowledges its delivery. */
  const accept = async (
    { outbox, dispatcher, kick }: Opened,
    { sentinel, event }: TargetDelivery,
  ): Promise<TargetAck> => {
    if (event.id.includes(".")) {
      throw new SvcError(
        "invalid_input",
        `event id ${JSON.stringify(event.id)} contains "."; event ids become webhook-id headers and must not`,
      );
    }
    // A full outbox refuses before the body is built (a pusher that outruns delivery sends many).
    const full = outbox.refusal(sentinel.id, event.id);
    if (full) throw full;
    const body = buildDeliveryBody(sentinel.id, asStoredTarget(sentinel.spec.target), event, ctx.clock.now());
    const until = sentinel.spec.until;
    const limit = until.kind === "count" ? until.n : undefined;
    const { row, created, evicted } = await outbox.add({ sentinelId: sentinel.id, eventId: event.id, body, limit });
    for (const gone of evicted) if (!gone.seen) void dispatcher.acknowledge(gone);
    // Team mode: another daemon accepted the event (or the count was reached there): nothing to count.
    if (!row || (team && !created)) return { ack: "duplicate" };
    const now =
      created && row.status === "pending" && health.isSuspended(sentinel.id)
        ? await boundBacklog(outbox, sentinel.id, row)
        : row;
    if (now.status === "pending") kick(now.requestId);
    else if (!now.seen) await dispatcher.acknowledge(now);
    return { ack: "deferred" };
  };

  const target: WebhookTarget = {
    inputSchema,
    vault,
    transfer: webhookTransfer(ctx, {
      outbox: async () => {
        const { file } = await open();
        if (!file) throw new SvcError("internal", "the webhook target in team mode has no file outbox to transfer");
        return file;
      },
      vault,
    }),

    async create(input, meta) {
      const { url, secret, mcp } = inputSchema.parse(input);
      const callback = callbackUrl(url);
      // The verifier refuses a malformed secret (challenge_failed) before sending anything.
      const { cached } = await deps.verifier.verify({
        url: callback,
        secret,
        subscriptionId: mcp?.subscriptionId ?? meta.sentinelId,
        principal: meta.principal,
      });
      const secretRef = await vault.put(meta.sentinelId, secret);
      const verification = { at: ctx.clock.now(), cached };
      return { kind: "webhook", url: callback, secretRef, verification, ...(mcp ? { mcp } : {}) };
    },

    project(stored, meta) {
      const t = asStoredTarget(stored);
      return {
        kind: "webhook",
        url: typeof stored.url === "string" ? stored.url : "",
        hasSecret: true,
        secretRedacted: true,
        ...(t?.mcp ? { subscriptionId: t.mcp.subscriptionId, eventName: t.mcp.eventName } : {}),
        ...(t?.verification
          ? { verification: { at: new Date(t.verification.at).toISOString(), cached: t.verification.cached } }
          : {}),
        ...(t ? { deliveryStatus: health.status(meta?.sentinelId, t) } : {}),
      };
    },

    async refresh(sentinel, input, meta) {
      const parsed = inputSchema.safeParse(input);
      if (!parsed.success)
        throw new SvcError("invalid_input", `invalid webhook target for a refresh of ${sentinel.id}`, {
          details: issuesToDetails(parsed.error.issues, "target"),
        });
      const stored = asStoredTarget(sentinel.spec.target);
      if (!stored) throw new SvcError("invalid_input", `sentinel ${sentinel.id} has no webhook target to refresh`);
      const { url, secret, mcp } = parsed.data;
      if (callbackUrl(url) !== stored.url) {
        throw new SvcError(
          "invalid_input",
          `a refresh cannot change sentinel ${sentinel.id}'s callback URL; create another sentinel (or subscription) for a new URL`,
          {
            details: [{ path: "target.url", message: "must equal the stored callback URL" }],
          },
        );
      }
      if (!sameMcp(mcp, stored.mcp)) {
        throw new SvcError(
          "invalid_input",
          `a refresh cannot change sentinel ${sentinel.id}'s MCP subscription id or event name`,
          {
            details: [
              {
                path: "target.mcp",
                message: stored.mcp
                  ? "must equal the stored {subscriptionId, eventName}"
                  : "this sentinel is not an MCP subscription",
              },
            ],
          },
        );
      }
      // A changed secret is challenge-verified first (signed with both); a failure changes nothing and resumes nothing.
      const { rotated } = await target.rotate({ sentinelId: sentinel.id, secret, principal: meta.principal });
      const { resumed } = await target.resumeById(sentinel.id);
      return { rotated, resumed };
    },

    async resume(sentinel) {
      return target.resumeById(sentinel.id);
    },

    async deliver(delivery) {
      return accept(await open(), delivery);
    },

    async deliverMany(deliveries) {
      const opened = await open();
      const { outbox } = opened;
      // Each accept() hands its row to the outbox synchronously, so the journal keeps this order
      // and its group commit makes the rows durable together. No room appears meanwhile: once
      // the outbox refuses one new event, that one refusal answers the batch's new events after it.
      let refused: SvcError | undefined;
      return Promise.allSettled(
        deliveries.map((d, i) => {
          const { sentinel, event } = d;
          refused ??= outbox.refusal(sentinel.id, event.id, { batch: i < deliveries.length - 1 });
          return refused && !outbox.knows(sentinel.id, event.id) ? Promise.reject(refused) : accept(opened, d);
        }),
      );
    },

    ledger: {
      ready: async () => {
        const { outbox } = await open();
        // Team mode: other daemons accept events too; what they accepted is read again.
        if (team) await (outbox as import("./team/team-outbox.js").TeamOutbox).refresh();
      },
      has: (sentinelId, eventId) => ledgerOutbox().hasEvent(sentinelId, eventId),
      accepted: (sentinelId) => ledgerOutbox().accepted(sentinelId),
      adopt: async (sentinelId, record) => (await open()).outbox.adopt(sentinelId, record.eventIds, record.accepted),
    },

    async removed(sentinel: SentinelView) {
      const { outbox } = await open();
      const killed = await outbox.killSentinel(sentinel.id, "sentinel_removed");
      await outbox.markSeen(...killed.map((row) => row.requestId));
      await outbox.forget(sentinel.id);
      await vault.removeSentinel(sentinel.id);
      health.forget(sentinel.id);
    },

    async status(sentinel: SentinelView) {
      const { outbox } = await open();
      const rows = (await outbox.rowsOf(sentinel.id)).map(statusRow);
      const count = (s: string) => rows.filter((r) => r.status === s).length;
      const stored = asStoredTarget(sentinel.spec.target);
      return {
        outbox: { pending: count("pending"), delivered: count("delivered"), dead: count("dead"), rows },
        ...(stored?.rotatedAt ? { rotatedAt: stored.rotatedAt } : {}),
      };
    },

    async deliveryCounts(sentinelIds: ReadonlySet<string>) {
      return (await open()).outbox.counts(sentinelIds);
    },

    /** `svc doctor`: the vault and the outbox files, read-only (the outbox is never opened here). */
    async check({ sentinels: stored }) {
      if (team) return (await import("./team/check.js")).checkTeamTables(ctx.service("teamDatabase"), stored);
      return [...(await checkVaultFile(ctx.home, stored)), ...(await checkOutboxFiles(ctx.home, stored))];
    },

    async resumeWebhookDeliveries() {
      const { outbox } = await open();
      const pending = (await outbox.pending()).length;
      if (pending > 0) logger.info("resuming webhook deliveries", { pending });
      await tick();
    },

    async start() {
      await target.resumeWebhookDeliveries();
      if (team) {
        // Each row's attempts run as team jobs, on whichever daemon claims them (one at a time).
        const { dispatcher } = await open();
        const { DELIVER_TASK } = await import("./team/team-outbox.js");
        stopWork = await ctx
          .service("teamJobs")
          .work(DELIVER_TASK, (payload) => dispatcher.deliverOnce(String(payload.requestId)), {
            concurrency: MAX_IN_FLIGHT,
          });
      }
      // Housekeeping only: an unreadable vault must not keep deliveries from running.
      await pruneSecrets().catch((err: Error) =>
        logger.warn("could not look for unreferenced webhook secrets", { error: err.message }),
      );
      const every = deps.tickMs ?? 60_000;
      if (every > 0) {
        timer = setInterval(
          () => void tick().catch((err: Error) => logger.error("webhook outbox tick failed", { error: err.message })),
          every,
        );
        timer.unref();
        // An overdue row waits at most this long for its job again, rather than the whole tick.
        if (team)
          redriveTimer = setInterval(
            () =>
              void redrive().catch((err: Error) =>
                logger.warn("could not look for overdue webhook rows", { error: err.message }),
              ),
            Math.min(every, REDRIVE_EVERY_MS),
          ).unref();
      }
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      clearInterval(redriveTimer);
      // Team mode: no more delivery jobs taken here; the attempts running finish first.
      await stopWork?.();
      if (opened) {
        const { outbox, dispatcher } = await opened;
        await dispatcher.stop();
        await outbox.close();
        opened = undefined;
        openedOutbox = undefined;
      }
    },

    async replay(sentinelId, selector) {
      const { outbox, kick } = await open();
      return replayRows(
        { sentinels: sentinels(), outbox, dispatcher: { enqueue: kick }, vault, clock: ctx.clock },
        sentinelId,
        selector,
      );
    },

    rotate: (input) =>
      rotateSecret(
        { sentinels: sentinels(), vault, verifier: deps.verifier, clock: ctx.clock, random: ctx.random },
        input,
      ),

    async resumeById(sentinelId) {
      const { outbox, kick } = await open();
      return resumeDelivery(
        { sentinels: sentinels(), outbox, dispatcher: { enqueue: kick }, health, events, logger },
        sentinelId,
      );
    },

    async checkCallbacks(url, principal) {
      const { outbox } = await open();
      return checkSuspendedCallbacks(
        { sentinels: sentinels(), outbox, vault, verifier: deps.verifier, resume: (id) => target.resumeById(id) },
        url,
        principal,
      );
    },

    tick,
    idle: async () => (await open()).dispatcher.idle(),
    outbox: async () => {
      const { file } = await open();
      if (!file) throw new SvcError("conflict", "the webhook outbox is in the team store; use outboxPort()");
      return file;
    },
    outboxPort: async () => (await open()).outbox,
  };
  return target;
}

/** What the engine's ledger asks, answered synchronously (the file outbox, or what this daemon knows of the team's). */
interface LedgerView {
  hasEvent(sentinelId: string, eventId: string): boolean;
  accepted(sentinelId: string): number;
}

interface Opened {
  outbox: OutboxPort;
  dispatcher: Dispatcher;
  /** Starts a pending row's delivery (file mode; in team mode its job does). */
  kick: (requestId: string) => void;
  /** The file outbox (file mode only). */
  file?: Outbox;
  /** The team store's outbox (team mode only). */
  teamOutbox?: TeamOutbox;
}

function statusRow(row: OutboxRow) {
  return {
    requestId: row.requestId,
    eventId: row.eventId,
    status: row.status,
    ...(row.deadReason ? { deadReason: row.deadReason } : {}),
    ...(row.replays ? { replays: row.replays, replayedAt: row.replayedAt } : {}),
    attempts: row.deliveryState.attempts,
    lastError: row.deliveryState.lastError,
    lastAt: row.deliveryState.lastAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    bodyLength: row.bodyBytes.length,
  };
}
