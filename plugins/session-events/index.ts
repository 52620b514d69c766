/**
 * The `sessions` provider: the daemon's session events (`session:started`, `session:ended`, ...
 * on `/events`) as sentinel events (type `session.<what>`, subject `session:<id>`), so a sentinel
 * or an MCP subscription (`session.lifecycle`) hears them. It listens through the host service
 * "daemonEvents" and ingests in the order heard; `session.ended` is terminal for its session.
 */
import { defineProvider, type SvcEvent } from "../../core/plugin-api/index.js";
import { sessionLifecycleEventType } from "./event-type.js";
import { toSessionEvent } from "./session-event.js";

const KIND = "sessions";

export default defineProvider({
  kind: KIND,
  description: "The daemon's session lifecycle events (session.started, session.turn-ended, session.ended, ...)",
  setup(ctx) {
    let unsubscribe: (() => void) | undefined;
    let chain: Promise<void> = Promise.resolve();
    const ingest = (event: SvcEvent) => {
      chain = chain
        .then(async () => {
          const sentinels = ctx.service("sentinels");
          if (sentinels.active(KIND).length > 0) await sentinels.ingest(KIND, [event]);
        })
        .catch((err: Error) =>
          ctx.logger.warn("session event not ingested", { eventId: event.id, type: event.type, error: err.message }),
        );
    };
    return {
      defaultTypes: () => ["session.*"],
      readiness: async () =>
        unsubscribe
          ? { ready: true, detail: "hears the daemon's session events" }
          : {
              ready: false,
              detail: "not listening: the host offers no daemonEvents service here (only the daemon does)",
            },
      terminalSubjects: (event) => (event.type === "session.ended" ? [event.subjects.at(-1)!] : []),
      eventTypes: () => [sessionLifecycleEventType],
      async start() {
        if (unsubscribe || !ctx.hasService("daemonEvents")) return;
        unsubscribe = ctx.service("daemonEvents").subscribe("session:", (e) => {
          const event = toSessionEvent(e);
          if (event) ingest(event);
        });
      },
      async stop() {
        unsubscribe?.();
        unsubscribe = undefined;
        await chain;
      },
    };
  },
});
