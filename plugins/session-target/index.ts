/**
 * The `session` target: each matched event becomes a prompt in a live agent session — queued
 * behind an in-flight turn, steered, or interrupting it, by the sentinel's `urgency` (default
 * from `defaults.agentPromptInterrupt`) under `defaults.messaging.agentInterrupt` (a denied
 * interrupt is delivered as steer, and the receipt says so). When the session has ended, the
 * event is parked (persisted beside the session's transcript) and shown by `svc sentinel status`.
 */
import { z } from "zod";
import { defineTarget, type PromptReceipt, type PromptUrgency, type SessionHost } from "../../core/plugin-api/index.js";
import { eventPrompt } from "./format.js";

const urgency = z.enum(["queue", "steer", "interrupt"]);

const input = z.strictObject({
  kind: z.literal("session"),
  sessionId: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, "must be a session id such as ses_01J…"),
  urgency: urgency.optional(),
});

export default defineTarget({
  kind: "session",
  description: "Prompts matched events into a live agent session; parks them when the session has ended",
  setup(ctx) {
    const sessions = (): SessionHost => ctx.service("sessions");
    const last = new Map<string, { eventId: string; at: number; receipt?: PromptReceipt; parked?: boolean }>();
    const urgencyOf = (stored: Record<string, unknown>): PromptUrgency =>
      (stored.urgency as PromptUrgency | undefined) ??
      (ctx.config().defaults?.agentPromptInterrupt === true ? "interrupt" : "queue");
    return {
      inputSchema: input,
      async create(raw) {
        const t = input.parse(raw);
        return { kind: "session", sessionId: t.sessionId, ...(t.urgency ? { urgency: t.urgency } : {}) };
      },
      project: (stored) => ({
        kind: "session",
        sessionId: stored.sessionId,
        ...(stored.urgency ? { urgency: stored.urgency } : {}),
      }),
      async deliver({ sentinel, event }) {
        const sessionId = String(sentinel.spec.target.sessionId);
        const text = eventPrompt(sentinel, event);
        const host = sessions();
        if (host.state(sessionId) === "live") {
          const receipt = await host.deliver(sessionId, text, {
            sender: { kind: "sentinel", id: sentinel.id },
            urgency: urgencyOf(sentinel.spec.target),
            ref: { sentinelId: sentinel.id, eventId: event.id },
          });
          last.set(sentinel.id, {
            eventId: event.id,
            at: ctx.clock.now(),
            receipt,
            ...(receipt.delivery === "parked" ? { parked: true } : {}),
          });
          return { ack: "now" };
        }
        await host.park(sessionId, {
          sentinelId: sentinel.id,
          eventId: event.id,
          text,
          parkedAt: ctx.clock.now(),
          reason: `session ${sessionId} is ${host.state(sessionId) === "ended" ? "ended" : "not running in this daemon"}`,
        });
        last.set(sentinel.id, { eventId: event.id, at: ctx.clock.now(), parked: true });
        ctx.logger.info("session target parked an event", { sentinel: sentinel.id, event: event.id, sessionId });
        return { ack: "now" };
      },
      async status(sentinel) {
        const sessionId = String(sentinel.spec.target.sessionId);
        const host = sessions();
        const parked = await host.parked(sessionId, sentinel.id);
        return {
          sessionId,
          session: host.state(sessionId),
          urgency: urgencyOf(sentinel.spec.target),
          parked: parked.length,
          parkedEvents: parked.slice(-20).map((p) => ({ eventId: p.eventId, parkedAt: p.parkedAt, reason: p.reason })),
          ...(last.has(sentinel.id) ? { lastDelivery: last.get(sentinel.id) } : {}),
        };
      },
    };
  },
});
