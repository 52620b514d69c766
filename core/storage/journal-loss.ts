/**
 * Losses of acknowledged records found in append journals (core/storage/journal-length.ts): kept
 * durably in `<journal>.missing` until the user acknowledges them by deleting that file, told by
 * the journal's owner at start and by `svc doctor`. See docs/storage.md, "A journal that knows its length".
 */
import { readFile } from "node:fs/promises";
import { writeFileDurable } from "./atomic-write.js";
import {
  inspectJournal,
  journalSize,
  readJournalLength,
  type JournalCheck,
  type JournalLength,
} from "./journal-length.js";

/** The losses found in the journal at `journal` and not yet acknowledged (deleted). */
export const lossRecordPath = (journal: string): string => `${journal}.missing`;

/** One loss found in a journal, as `<journal>.missing` keeps it. */
export interface JournalLoss {
  /** When a start found it (ISO 8601). */
  foundAt: string;
  /** Acknowledged records missing, and their bytes. */
  records: number;
  bytes: number;
  /** Their sequence numbers, where known (`from` is the one after the last record still there). */
  seqs?: { from?: number; to: number };
  /** What the record said, and what the file held. */
  expected: { lines: number; bytes: number };
  found: { lines: number; bytes: number };
}

interface LossFile {
  version: 1;
  journal: string;
  losses: JournalLoss[];
}

/** The losses kept for `journal` and not yet acknowledged (none when `<journal>.missing` is absent or unreadable). */
export async function readJournalLosses(journal: string): Promise<JournalLoss[]> {
  const text = await readFile(lossRecordPath(journal), "utf8").catch(() => undefined);
  if (text === undefined) return [];
  try {
    const doc = JSON.parse(text) as Partial<LossFile>;
    return Array.isArray(doc.losses) ? doc.losses.filter((l) => typeof l?.records === "number") : [];
  } catch {
    // Written atomically, so only a hand edit spoils it: still a loss the user has not acknowledged.
    return [
      { foundAt: "unknown", records: 0, bytes: 0, expected: { lines: 0, bytes: 0 }, found: { lines: 0, bytes: 0 } },
    ];
  }
}

/** The loss a check shows, as it is kept (`lastPresentSeq`: the sequence number of the last record still there). */
export function lossOf(check: JournalCheck, now: number, lastPresentSeq?: number): JournalLoss | undefined {
  const { missing, recorded } = check;
  if (!missing || !recorded) return undefined;
  const to = missing.lastSeq;
  return {
    foundAt: new Date(now).toISOString(),
    records: missing.records,
    bytes: missing.bytes,
    ...(to !== undefined
      ? { seqs: { ...(lastPresentSeq !== undefined && lastPresentSeq < to ? { from: lastPresentSeq + 1 } : {}), to } }
      : {}),
    expected: { lines: recorded.lines, bytes: recorded.bytes },
    found: { lines: check.lines, bytes: check.wholeEnd },
  };
}

/** The same loss found twice (a start that found it stopped before the record was set to the journal as found). */
export const sameLoss = (a: JournalLoss, b: JournalLoss): boolean =>
  a.expected.lines === b.expected.lines && a.expected.bytes === b.expected.bytes && a.found.bytes === b.found.bytes;

/**
 * Keeps `loss` in `<journal>.missing` (durably) unless it is kept already (a start that found it
 * stopped before the record was set to the journal as found). Returns whether it was new.
 */
export async function keepJournalLoss(journal: string, loss: JournalLoss): Promise<boolean> {
  const kept = await readJournalLosses(journal);
  if (kept.some((k) => sameLoss(k, loss))) return false;
  const doc: LossFile = { version: 1, journal: journal.split("/").pop() ?? journal, losses: [...kept, loss] };
  await writeFileDurable(lossRecordPath(journal), `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600 });
  return true;
}

/** What a start found in a journal (for its owner's log line). */
export interface JournalStartCheck {
  check?: JournalCheck;
  /** The loss this start found (`fresh`: not kept before; `keepError`: why it could not be kept, e.g. a full disk). */
  loss?: { loss: JournalLoss; fresh: boolean; keepError?: string };
  /** Losses kept from before and not yet acknowledged (the loss above excluded). */
  earlier: JournalLoss[];
}

/**
 * Checks the journal at `path` at start and keeps a loss it shows (see {@link keepJournalLoss});
 * `lastPresentSeq` names the first missing sequence number. Changes nothing else: opening the
 * journal ({@link AppendJournal.open}) then sets its record to the file as found.
 */
export async function checkJournalAtStart(
  path: string,
  options: { lastPresentSeq?: number; now?: number } = {},
): Promise<JournalStartCheck> {
  const check = await inspectJournal(path);
  const earlier = await readJournalLosses(path);
  const loss = check && lossOf(check, options.now ?? Date.now(), options.lastPresentSeq);
  if (!loss) return { ...(check ? { check } : {}), earlier };
  const rest = earlier.filter((l) => !sameLoss(l, loss));
  try {
    return { check, loss: { loss, fresh: await keepJournalLoss(path, loss) }, earlier: rest };
  } catch (err) {
    // Told all the same; the journal's open then leaves its record as it is, so the next start finds it again.
    return { check, loss: { loss, fresh: true, keepError: (err as Error).message }, earlier: rest };
  }
}

/** The sequence numbers of a loss as text (`12-21`, `up to 21`), or undefined when unknown. */
export function lossSeqs(loss: JournalLoss): string | undefined {
  if (!loss.seqs) return undefined;
  return loss.seqs.from === undefined
    ? `up to ${loss.seqs.to}`
    : loss.seqs.from === loss.seqs.to
      ? `${loss.seqs.to}`
      : `${loss.seqs.from}-${loss.seqs.to}`;
}

/**
 * What the journal at `path` holds against its length record: when the record matches the file
 * (the usual case) its counts, without reading the file; else the file read and counted, and a
 * loss it shows kept in `<path>.missing` (its owner may have kept it already, with more detail).
 */
export async function lengthAtOpen(path: string): Promise<{
  size?: number;
  record?: JournalLength;
  g: number;
  lines: number;
  seq?: number;
  check?: JournalCheck;
  /** False when a loss was found and could not be kept: the record is then left as it is. */
  kept?: boolean;
}> {
  const size = await journalSize(path);
  const record = await readJournalLength(path).catch(() => undefined);
  const g = record?.g ?? 0;
  if (size === undefined) return { g, lines: 0 };
  if (record && record.bytes === size)
    return { size, record, g, lines: record.lines, ...(record.seq !== undefined ? { seq: record.seq } : {}) };
  const check = await inspectJournal(path);
  if (!check) return { g, lines: 0 };
  const loss = lossOf(check, Date.now());
  // A loss that cannot be kept (a full disk) leaves the record as it is: the next start finds it again.
  const kept = loss
    ? await keepJournalLoss(path, loss).then(
        () => true,
        () => false,
      )
    : true;
  // Lines past the record were written but never answered; their sequence numbers are unknown here.
  const seq = !check.missing && check.recorded?.bytes === check.wholeEnd ? check.recorded.seq : undefined;
  return { size, record, g, lines: check.lines, ...(seq !== undefined ? { seq } : {}), check, kept };
}
