/**
 * The `routine` target: its shape is frozen (`{kind: "routine", routineId}`) but it is not
 * implemented, so creating one is refused with `not_implemented` and nothing is stored.
 */
import { z } from "zod";
import { defineTarget, SvcError } from "../../core/plugin-api/index.js";

const NOT_IMPLEMENTED =
  'routine targets are not implemented yet (their shape {kind: "routine", routineId} is frozen); use a session or webhook target';

export default defineTarget({
  kind: "routine",
  description:
    'Routines: the target shape {kind: "routine", routineId} is reserved; a sentinel with one is refused and nothing is stored',
  setup() {
    return {
      inputSchema: z.strictObject({ kind: z.literal("routine"), routineId: z.string().min(1) }),
      async create() {
        throw new SvcError("not_implemented", NOT_IMPLEMENTED);
      },
      project: (stored) => ({ kind: "routine", routineId: stored.routineId }),
      async deliver() {
        throw new SvcError("not_implemented", NOT_IMPLEMENTED);
      },
    };
  },
});
