/**
 * Declaring an MCP event type ({@link ProviderEventType}) from zod schemas: the JSON Schemas
 * `events/list` publishes are generated from the same schemas that validate the arguments, so the
 * two never disagree. A plugin may also write its ProviderEventType by hand.
 */
import { z } from "zod";
import { SvcError, issuesToDetails } from "../errors.js";
import type { MatchClauseSpec, ProviderEventType } from "./provider.js";

export interface EventTypeDef<A extends z.ZodObject> {
  name: string;
  description: string;
  /** The arguments: a `z.strictObject` whose every property has a `.describe()`. */
  arguments: A;
  /** The event `data` this provider produces; every property described. */
  payload: z.ZodType;
  /** The clauses for arguments already parsed by `arguments` (throw SvcError `invalid_input` for a combination it refuses). */
  match(args: z.infer<A>): MatchClauseSpec[];
  preferWhenReady?: string;
}

export function defineEventType<A extends z.ZodObject>(def: EventTypeDef<A>): ProviderEventType {
  return {
    name: def.name,
    description: def.description,
    inputSchema: jsonSchemaOf(def.arguments),
    payloadSchema: jsonSchemaOf(def.payload),
    toMatch: (args) => def.match(parseEventArguments(def.arguments, args, def.name)),
    ...(def.preferWhenReady ? { preferWhenReady: def.preferWhenReady } : {}),
  };
}

/** The JSON Schema of `schema` as accepted on input (objects stay open unless strict), without `$schema`. */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return rest;
}

/**
 * Parses subscription arguments or throws SvcError `invalid_input` whose message names the
 * argument, what was wrong and what is allowed (an unknown argument lists the known ones).
 */
export function parseEventArguments<A extends z.ZodObject>(schema: A, args: unknown, name: string): z.infer<A> {
  const r = schema.safeParse(args ?? {});
  if (r.success) return r.data;
  const known = Object.keys(schema.shape);
  const given = typeof args === "object" && args !== null ? (args as Record<string, unknown>) : {};
  const details = issuesToDetails(
    r.error.issues.map((issue) => {
      if (issue.code === "unrecognized_keys")
        return {
          path: [issue.keys.join(", ")],
          message: `is not an argument of ${name}; its arguments are ${known.join(", ") || "(none)"}`,
        };
      const key = issue.path[0];
      if (issue.path.length === 1 && typeof key === "string" && given[key] === undefined) {
        return {
          path: issue.path,
          message: `is required: ${(schema.shape[key] as z.ZodType | undefined)?.description ?? issue.message}`,
        };
      }
      return issue;
    }),
  );
  const first = details[0]!;
  throw new SvcError("invalid_input", `invalid arguments for ${name}: ${first.path}: ${first.message}`, { details });
}

/** The SvcError for a combination of arguments a type refuses (e.g. two that cannot both apply). */
export function eventArgumentError(name: string, path: string, message: string): SvcError {
  return new SvcError("invalid_input", `invalid arguments for ${name}: ${path}: ${message}`, {
    details: [{ path, message }],
  });
}
