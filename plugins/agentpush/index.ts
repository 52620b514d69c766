/**
 * The `agentpush` provider: agents, scripts and CI push events to
 * `POST /providers/agentpush/events` (auth "token"). The answer is 2xx only once every matched
 * event is durably accepted by its target. Vocabulary: whatever the pusher chooses; a clause
 * without `types` watches every type (`*`).
 */
import { defineProvider, issuesToDetails, SvcError, type SvcEvent } from "../../core/plugin-api/index.js";
import { pushBatchSchema, pushedEventSchema, type PushedEvent } from "./push-schema.js";
import { agentpushEventType } from "./event-type.js";

const PUSH_PATH = "/providers/agentpush/events";

export default defineProvider({
  kind: "agentpush",
  description: "Events pushed by scripts and agents (POST /providers/agentpush/events)",
  setup(ctx) {
    /** Subjects made terminal by an event of the push being ingested, by event id. */
    const terminals = new Map<string, string[]>();
    ctx.service("routes").add({
      method: "POST",
      path: PUSH_PATH,
      auth: "token",
      maxBodyBytes: 4 * 1024 * 1024,
      async handler(req) {
        const body = req.json();
        const parsed = Array.isArray(body) ? pushBatchSchema.safeParse(body) : pushedEventSchema.safeParse(body);
        if (!parsed.success) {
          const details = issuesToDetails(parsed.error.issues);
          throw new SvcError("invalid_input", `invalid pushed event: ${details[0]!.path}: ${details[0]!.message}`, {
            details,
          });
        }
        const pushed: PushedEvent[] = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
        const events = pushed.map(toEvent);
        for (const p of pushed)
          if (p.terminal) terminals.set(p.id, p.terminal === true ? [p.subjects.at(-1)!] : p.terminal);
        try {
          const result = await ctx.service("sentinels").ingest("agentpush", events);
          const failed = result.matched.filter((m) => m.outcome === "failed");
          if (failed.length) {
            throw new SvcError(
              "unavailable",
              `${failed.length} matched event(s) were not accepted by their target; push them again`,
              {
                details: {
                  failed: failed.map((f) => ({ sentinelId: f.sentinelId, eventId: f.eventId, error: f.error })),
                },
              },
            );
          }
          return { status: 200, body: result };
        } finally {
          for (const p of pushed) terminals.delete(p.id);
        }
      },
    });
    return {
      defaultTypes: () => ["*"],
      readiness: async () => ({ ready: true, detail: `accepts pushed events at POST ${PUSH_PATH}` }),
      terminalSubjects: (event) => terminals.get(event.id) ?? [],
      eventTypes: () => [agentpushEventType],
    };
  },
});

function toEvent(p: PushedEvent): SvcEvent {
  return {
    id: p.id,
    type: p.type,
    subjects: p.subjects,
    ...(p.time !== undefined ? { time: p.time } : {}),
    ...(p.data !== undefined ? { data: p.data } : {}),
  };
}
