/**
 * SentinelSpec as SPEC.md gives it, plus the event shape pushed by providers. The `target` object
 * is only checked for a `kind` here: the loaded target plugin's `inputSchema` validates the rest.
 */
import { z } from "zod";
import { SvcError, issuesToDetails } from "../errors.js";
import {
  CLAUSES_PER_SENTINEL_MAX,
  EVENT_ID_RULE,
  EVENT_TYPE_MAX,
  SUBJECTS_PER_EVENT_MAX,
  SUBJECT_LENGTH_MAX,
  TYPES_PER_CLAUSE_MAX,
  isValidEventId,
} from "../plugin-api/limits.js";

const slug = z.string().regex(/^[a-z][a-z0-9-]*$/, "must be a lower-case slug (a-z, 0-9, -)");

const matchClauseSchema = z.strictObject({
  subject: z
    .string()
    .min(1, "must not be empty")
    .max(SUBJECT_LENGTH_MAX)
    .describe("exact subject, or a prefix when it ends with `*`"),
  types: z
    .array(z.string().min(1, "must not be empty").max(EVENT_TYPE_MAX))
    .min(1, "give at least one type glob, or omit types")
    .max(TYPES_PER_CLAUSE_MAX, `at most ${TYPES_PER_CLAUSE_MAX} type globs per clause`)
    .optional()
    .describe("type globs (picomatch); omitted: the provider's defaultTypes(subject)"),
});

export const untilSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z
      .literal("subject_terminal")
      .describe("stop when the watched subject reaches its end (e.g. the pull request is merged or closed)"),
  }),
  z.strictObject({
    kind: z.literal("at").describe("stop at a point in time"),
    ms: z.number().int("must be an integer (epoch ms)").positive().describe("when to stop, in epoch milliseconds"),
  }),
  z.strictObject({
    kind: z.literal("count").describe("stop after a number of delivered events"),
    n: z.number().int("must be an integer").positive().describe("how many matching events to deliver before stopping"),
  }),
  z.strictObject({ kind: z.literal("never").describe("watch until the sentinel is removed") }),
]);

const targetInputSchema = z.looseObject({ kind: slug });

export const sentinelSpecSchema = z.strictObject({
  match: z
    .array(matchClauseSchema)
    .min(1, "give at least one match clause")
    .max(CLAUSES_PER_SENTINEL_MAX, `at most ${CLAUSES_PER_SENTINEL_MAX} match clauses per sentinel`),
  until: untilSchema,
  target: targetInputSchema,
  provider: slug.optional(),
  group: z.string().min(1).max(200).optional(),
  label: z.string().min(1).max(200).optional(),
});

export type MatchClause = z.infer<typeof matchClauseSchema>;

/** A sentinel event as providers hand it to the engine (SvcEvent, validated; unknown fields dropped). */
export const svcEventSchema = z.object({
  id: z.string().refine(isValidEventId, `must be ${EVENT_ID_RULE} (it is the webhook-id header)`),
  type: z.string().min(1).max(EVENT_TYPE_MAX),
  subjects: z
    .array(z.string().min(1).max(SUBJECT_LENGTH_MAX))
    .min(1, "give at least one subject")
    .max(SUBJECTS_PER_EVENT_MAX, `at most ${SUBJECTS_PER_EVENT_MAX} subjects per event`),
  time: z.string().optional(),
  data: z.unknown().optional(),
});

/** Parses with `schema` or throws `invalid_input` with the zod issues as `[{path, message}]`. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, what: string, prefix = ""): z.infer<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  const details = issuesToDetails(r.error.issues, prefix);
  const first = details[0]!;
  throw new SvcError("invalid_input", `invalid ${what}: ${first.path}: ${first.message}`, { details });
}
