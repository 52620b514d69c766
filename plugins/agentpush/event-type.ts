/**
 * The agentpush MCP event type `agentpush.event` (`events/list`): every event pushed to
 * `POST /providers/agentpush/events` whose subject and type the arguments select.
 */
import {
  defineEventType,
  EVENT_TYPE_MAX,
  SUBJECT_LENGTH_MAX,
  TYPES_PER_CLAUSE_MAX,
  z,
} from "../../core/plugin-api/index.js";

export const agentpushEventType = defineEventType({
  name: "agentpush.event",
  description:
    "Events that scripts, agents and CI push to svc (POST /providers/agentpush/events) under the subjects and types they choose. Select them by subject (exact, or a prefix ending in *) and optionally by type globs.",
  arguments: z.strictObject({
    subject: z
      .string()
      .min(1, "must not be empty")
      .max(SUBJECT_LENGTH_MAX, `must be at most ${SUBJECT_LENGTH_MAX} characters`)
      .describe(
        'A subject the pushed events carry, exactly (e.g. "ci:acme/api"), or a prefix ending in * (e.g. "ci:*"; "*" for every pushed event)',
      ),
    types: z
      .array(z.string().min(1, "must not be empty").max(EVENT_TYPE_MAX, `must be at most ${EVENT_TYPE_MAX} characters`))
      .min(1, "give at least one type glob, or omit types for every type")
      .max(TYPES_PER_CLAUSE_MAX, `at most ${TYPES_PER_CLAUSE_MAX} type globs`)
      .optional()
      .describe(
        'Only events whose type matches one of these globs (e.g. "ci.build.*"; * crosses dots). Default: every type',
      ),
  }),
  payload: z
    .unknown()
    .describe("The pushed event's data, as the pusher gave it (any JSON value; absent when it gave none)"),
  match: (a) => [{ subject: a.subject, ...(a.types ? { types: a.types } : {}) }],
});
