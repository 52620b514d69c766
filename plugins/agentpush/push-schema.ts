/** The body of `POST /providers/agentpush/events`: one event or an array of them. */
import { z } from "zod";
import {
  EVENT_ID_RULE,
  EVENT_TYPE_MAX,
  SUBJECTS_PER_EVENT_MAX,
  SUBJECT_LENGTH_MAX,
  isValidEventId,
} from "../../core/plugin-api/index.js";

const MAX_PUSH_BATCH = 1000;

export const pushedEventSchema = z.strictObject({
  id: z.string().refine(isValidEventId, `must be ${EVENT_ID_RULE} (it is the webhook-id header)`),
  type: z.string().min(1).max(EVENT_TYPE_MAX),
  subjects: z
    .array(z.string().min(1).max(SUBJECT_LENGTH_MAX))
    .min(1, "give at least one subject (broadest first)")
    .max(SUBJECTS_PER_EVENT_MAX, `at most ${SUBJECTS_PER_EVENT_MAX} subjects per event`),
  data: z.unknown().optional(),
  time: z.iso.datetime({ offset: true }).optional(),
  /** Marks subjects terminal after this event: `true` = its most specific (last) subject. */
  terminal: z.union([z.literal(true), z.array(z.string().min(1)).min(1)]).optional(),
});

export const pushBatchSchema = z
  .array(pushedEventSchema)
  .min(1, "give at least one event")
  .max(MAX_PUSH_BATCH, `at most ${MAX_PUSH_BATCH} events per push`);

export type PushedEvent = z.infer<typeof pushedEventSchema>;
