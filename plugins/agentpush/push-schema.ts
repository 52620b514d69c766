/** The body of `POST /providers/agentpush/events`: one event or an array of them. */
import { z } from "zod";

const MAX_PUSH_BATCH = 1000;

export const pushedEventSchema = z.strictObject({
  id: z.string().min(1).max(200).refine((s) => !s.includes("."), "must not contain \".\""),
  type: z.string().min(1).max(200),
  subjects: z.array(z.string().min(1).max(1000)).min(1, "give at least one subject (broadest first)"),
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
