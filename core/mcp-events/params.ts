/**
 * The params of the events extension's methods. Permissive where a field has a reason of its own
 * when wrong (`delivery.url` -> `invalid_url`, `delivery.secret` -> `invalid_secret`, `ttlMs` ->
 * `invalid_ttl`, cursors -> `invalid_cursor`): the handlers check those and say which.
 */
import { z } from "zod";
import { invalidParams } from "./rpc-errors.js";

const name = z.string().min(1).max(200).describe("the event type's name, as events/list gives it");
const args = z
  .record(z.string(), z.unknown())
  .optional()
  .describe("the subscription arguments (the event type's inputSchema); absent: {}");

export const listParams = z.object({
  cursor: z.string().optional().describe("nextCursor of the previous page"),
});

export const subscribeParams = z.object({
  name,
  arguments: args,
  delivery: z.looseObject({
    mode: z.string().describe('"webhook" (the only mode events/subscribe serves)'),
    url: z.unknown().optional().describe("the https callback URL"),
    secret: z.unknown().optional().describe("whsec_ + base64 of 24 to 64 random bytes"),
  }),
  cursor: z
    .string()
    .nullable()
    .optional()
    .describe("ignored: webhook deliveries have no replay (cursor is always null)"),
  maxAgeMs: z.number().int().nonnegative().optional().describe("ignored, as cursor"),
  ttlMs: z.unknown().optional().describe("suggested lifetime in ms; null: no expiry; absent: the default"),
});

export const unsubscribeParams = z.object({
  name,
  arguments: args,
  delivery: z.looseObject({ url: z.unknown().optional().describe("the callback URL subscribed") }),
});

export const pollParams = z.object({
  name,
  arguments: args,
  cursor: z.string().nullable().optional().describe("the cursor of the last answer; null or absent: start from now"),
  maxAgeMs: z.number().int().nonnegative().optional().describe("skip events ingested longer ago than this"),
  maxEvents: z.number().int().positive().optional().describe("at most this many events (default 100, at most 1000)"),
  timeoutMs: z.number().int().nonnegative().optional().describe("wait up to this long for an event (at most 30000)"),
});

/** Parses `params` or throws -32602 `invalid_params` naming the first wrong field. */
export function parseParams<S extends z.ZodType>(schema: S, params: unknown, method: string): z.infer<S> {
  const r = schema.safeParse(params ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw invalidParams("invalid_params", `${method}: ${issue.path.join(".") || "params"}: ${issue.message}`);
}
