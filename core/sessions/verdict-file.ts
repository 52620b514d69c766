/**
 * `<eventsDir>/<id>/verdict.json`: the session steward's latest verdict on a session, so that a
 * session an earlier daemon life ran (shown from its record, or resumed) keeps it. A checksummed
 * document (core/storage/checked-doc.ts); a damaged one is reported and read as no verdict.
 */
import { z } from "zod";
import { readCheckedDoc, writeCheckedDoc } from "../storage/checked-doc.js";
import { sessionFiles } from "./events-dir.js";
import type { SessionVerdict } from "./types.js";

const VERSION = 1;

const verdictSchema = z.object({
  verdict: z.enum(["on_track", "stuck", "needs_human", "done", "judge_error"]),
  reason: z.string(),
  suggestedPrompt: z.string().optional(),
  trigger: z.string(),
  at: z.number(),
  model: z.string(),
}) satisfies z.ZodType<SessionVerdict>;

export async function writeVerdict(eventsDir: string, sessionId: string, verdict: SessionVerdict): Promise<void> {
  await writeCheckedDoc(sessionFiles(eventsDir, sessionId).verdict, VERSION, "verdict", verdict);
}

/** The stored verdict, `undefined` when there is none; `onDamaged` hears of a damaged file (left as it is). */
export async function readVerdict(
  eventsDir: string,
  sessionId: string,
  onDamaged?: (path: string, reason: string) => void,
): Promise<SessionVerdict | undefined> {
  const read = await readCheckedDoc(sessionFiles(eventsDir, sessionId).verdict, VERSION, "verdict", verdictSchema);
  if (read.state === "damaged") onDamaged?.(read.path, read.reason);
  return read.state === "ok" ? read.value : undefined;
}
