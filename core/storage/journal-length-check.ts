/**
 * `svc doctor`'s check of every append journal's length (core/storage/journal-length.ts), read-only:
 * a journal shorter than its `.length` record lost records svc had acknowledged, and a
 * `.missing` file keeps a loss a start found until the user acknowledges it by deleting the file.
 * Both are `error` findings. See docs/storage.md, "A journal that knows its length".
 */
import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { inspectJournal } from "./journal-length.js";
import { lossOf, lossRecordPath, lossSeqs, readJournalLosses, sameLoss } from "./journal-loss.js";

const LENGTH = ".length";
const MISSING = ".missing";

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Checks the journals in `dirs` (each listed once, not recursively) that have a length record or kept losses. */
export async function checkJournalLengths(home: string, dirs: readonly string[]): Promise<DoctorFinding[]> {
  const out: DoctorFinding[] = [];
  for (const dir of dirs) {
    const names = (await readdir(dir).catch(() => [] as string[])).sort();
    const journals = new Set(
      names
        .filter((n) => n.endsWith(LENGTH) || n.endsWith(MISSING))
        .map((n) => n.slice(0, -(n.endsWith(LENGTH) ? LENGTH : MISSING).length)),
    );
    for (const name of journals) out.push(...(await checkOne(home, join(dir, name))));
  }
  return out;
}

async function checkOne(home: string, path: string): Promise<DoctorFinding[]> {
  const out: DoctorFinding[] = [];
  const file = relative(home, path);
  const kept = await readJournalLosses(path);
  const check = await inspectJournal(path).catch(() => undefined);
  const now = check && lossOf(check, Date.now());
  // A loss a start already kept is told once, below.
  if (now && !kept.some((k) => sameLoss(k, now))) {
    const seqs = lossSeqs(now);
    out.push({
      severity: "error",
      file,
      message: `${plural(now.records, "record")} svc had acknowledged as durable ${now.records === 1 ? "is" : "are"} missing from its end (${now.bytes} bytes${seqs ? `, sequence numbers ${seqs}` : ""}; its length record counts ${now.expected.lines} lines, the file holds ${now.found.lines}): the file was cut or replaced by an older copy, and what those records held (accepted events, deliveries) is lost`,
      fix: `if you have a backup of ${path} taken after those records were written, put it back now, with the daemon stopped and before it starts again; otherwise start the daemon: it logs the loss at error, keeps it in ${lossRecordPath(path)} and carries on without those records (nothing else svc keeps holds them)`,
    });
  }
  if (kept.length > 0) {
    const records = kept.reduce((n, k) => n + k.records, 0);
    const when = kept.map((k) => k.foundAt).join(", ");
    const seqs = kept
      .map(lossSeqs)
      .filter((s) => s !== undefined)
      .join(", ");
    out.push({
      severity: "error",
      file,
      message: `the daemon found ${records > 0 ? plural(records, "acknowledged record") : "acknowledged records"} missing from this journal (${when}${seqs ? `; sequence numbers ${seqs}` : ""}) and carried on without them: what they held (accepted events, deliveries) is lost`,
      fix: `the records cannot be recovered: restoring an older copy of the journal now would clash with what the daemon wrote since. Push the events they held again from their source if they are still wanted (svc sentinel status shows what each sentinel still has). Then acknowledge the loss by deleting ${lossRecordPath(path)}: svc doctor and the daemon's start-up stop reporting it`,
    });
  }
  return out;
}
