/** The webhook target's MCP tools, both needing the daemon's bearer token. */
import { z } from "zod";
import type { ToolRegistry } from "../../core/plugin-api/index.js";
import { replaySelectorSchema } from "./replay.js";
import type { WebhookTarget } from "./target.js";

export function addWebhookTools(tools: ToolRegistry, target: WebhookTarget): void {
  tools.add({
    name: "sentinel_resume",
    title: "Resume a suspended webhook sentinel",
    description:
      "Resume delivery of a webhook sentinel that endpoint health suspended (its callback kept failing): every pending event is sent again with a fresh set of attempts. Answers resumed: false when it was not suspended. Needs the daemon's bearer token.",
    inputSchema: { sentinelId: z.string().min(1).describe("the webhook sentinel (snt_…)") },
    outputSchema: {
      sentinelId: z.string().describe("the sentinel"),
      resumed: z.boolean().describe("false when delivery was not suspended (nothing changed)"),
      pending: z.number().describe("events waiting that are now being sent"),
    },
    requires: "token",
    handler: async ({ sentinelId }) => ({ sentinelId, ...(await target.resumeById(sentinelId)) }),
  });
  tools.add({
    name: "sentinel_replay",
    title: "Send webhook deliveries again",
    description:
      "Send a webhook sentinel's dead (or, with eventId/since, delivered) outbox rows again: exact stored bytes, same webhook-id, attempts reset, through the SSRF gate. Needs the daemon's bearer token.",
    inputSchema: {
      sentinelId: z.string().min(1).describe("the webhook sentinel (snt_…)"),
      ...replaySelectorSchema.shape,
    },
    outputSchema: {
      sentinelId: z.string().describe("the sentinel"),
      replayed: z
        .array(
          z.object({
            eventId: z.string().describe("the event (also the delivery's webhook-id)"),
            requestId: z.string().describe("the outbox row (req_…)"),
            was: z.enum(["delivered", "dead"]).describe("the row's status before the replay"),
            replays: z.number().describe("how many times the row has been replayed, this one included"),
          }),
        )
        .describe("the rows queued again"),
      skipped: z.number().describe("matched rows left alone (still pending)"),
    },
    requires: "token",
    handler: ({ sentinelId, ...selector }) => target.replay(sentinelId, selector),
  });
}
