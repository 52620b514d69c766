/**
 * The `payloadSchema` `events/list` publishes: the JSON Schema of an EventOccurrence's `data`
 * (core/plugin-api/mcp-event.ts), `{type, subjects, payload, truncated?}`, around the provider's
 * own schema of `payload` (its event data).
 */

/** What `payload` becomes when the occurrence is over the size limit (toEventOccurrence). */
const TRUNCATED_PAYLOAD = {
  type: "object",
  description: "Stands in for a payload too large to deliver (data.truncated is then true)",
  properties: {
    summary: { type: "string", description: "Why the payload was left out, with the occurrence's size and the limit" },
    subject: { type: ["string", "null"], description: "The event's most specific subject" },
  },
  required: ["summary", "subject"],
};

export function occurrenceDataSchema(payloadSchema: Record<string, unknown>): Record<string, unknown> {
  return {
    type: "object",
    description: "An occurrence's data: the svc event's type and subjects, and the provider's event data as payload",
    properties: {
      type: {
        type: "string",
        description: "The svc event type, <scheme>.<object>.<action> (e.g. github.pull_request.opened)",
      },
      subjects: {
        type: "array",
        items: { type: "string" },
        description: "The event's subjects, broadest first (e.g. github:acme/api, github:acme/api#42)",
      },
      payload: {
        description: "The event data (see anyOf: the provider's schema, or the stand-in for a payload too large)",
        anyOf: [payloadSchema, TRUNCATED_PAYLOAD],
      },
      truncated: {
        type: "boolean",
        const: true,
        description: "Present (true) when payload is the stand-in for one too large to deliver",
      },
    },
    required: ["type", "subjects", "payload"],
  };
}
