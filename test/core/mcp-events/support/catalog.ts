/**
 * An event catalog over the agentpush provider with what the real one (core/mcp-events/
 * catalog.ts, which always offers webhook and poll) never lists: `agentpush.polled` by poll
 * only, `agentpush.hooked` by webhook only, and types offering push. Only for the paths that
 * answer those; the other tests use the real catalog.
 */
import { McpRpcError } from "../../../../core/daemon/mcp/extensions.js";
import type { EventCatalog, EventTypeDescriptor } from "../../../../core/mcp-events/catalog-types.js";

const inputSchema = {
  type: "object",
  properties: {
    subject: { type: "string", description: "subject, or a prefix ending in *" },
    types: { type: "array", items: { type: "string" }, description: "type globs" },
  },
  required: ["subject"],
};
const payloadSchema = { type: "object", properties: { type: { type: "string" }, subjects: { type: "array" }, payload: {} } };

export const TYPES: EventTypeDescriptor[] = [
  { name: "agentpush.event", description: "an event pushed to agentpush", delivery: ["webhook", "poll"], inputSchema, payloadSchema },
  { name: "agentpush.polled", description: "the same, by poll only", delivery: ["poll"], inputSchema, payloadSchema },
  { name: "agentpush.hooked", description: "the same, by webhook only", delivery: ["webhook"], inputSchema, payloadSchema },
];

export function catalogOf(types: EventTypeDescriptor[]): EventCatalog {
  return {
    list: async () => types,
    async resolve(name, args) {
      if (!types.some((t) => t.name === name)) throw new McpRpcError(-32011, `no event type ${name}`, { kind: "event" });
      if (typeof args.subject !== "string" || args.subject === "") throw new McpRpcError(-32602, "arguments.subject: a subject is required", { reason: "invalid_arguments" });
      const types_ = Array.isArray(args.types) ? { types: args.types as string[] } : {};
      return { name, provider: "agentpush", match: [{ subject: args.subject, ...types_ }] };
    },
  };
}

export const testCatalog = catalogOf(TYPES);
