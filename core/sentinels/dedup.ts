/**
 * Deduplication by `(sentinelId, event.id)`, persisted per sentinel under
 * `$SVC_HOME/sentinels-dedup/` so that a delivery never rewrites sentinels.json:
 * - `<sentinelId>.log`: a journal, one JSON line per change `{q, e, a}` (sequence, event id,
 *   `now` | `deferred` | `seen`), appended durably (O_DSYNC) before the change counts. The file
 *   stays open (at most {@link MAX_OPEN_JOURNALS} sentinels at a time, least recently used closed
 *   first) and commits in groups: changes for one sentinel made while its previous write is in
 *   flight share the next durable write (core/storage/append-journal.ts). A change is
 *   applied in memory only once its line is durable, so `has` and `delivered` never run ahead of
 *   the disk;
 * - `<sentinelId>.json`: a snapshot `{seq, seen, inflight, delivered}` written atomically
 *   (core/storage) when the journal passes 2000 lines, after which the journal is emptied (both
 *   between two group commits). Lines with `q <= seq` are skipped on replay, so a crash between
 *   the two steps replays nothing twice; a torn last line (kill -9 mid-append) is dropped.
 * State: `seen` = the last 1000 event ids marked seen (oldest evicted first); `inflight` = ids a
 * target acked `deferred` and has not yet marked seen: they count as duplicates too, so a
 * re-pushed event never reaches the target a second time while its first delivery is pending;
 * `delivered` = deliveries so far (for `until: count` and the listings).
 */
import { readdir, readFile, rename, rm, truncate } from "node:fs/promises";
import { join } from "node:path";
import { inject, injectable } from "tsyringe";
import { AppendJournal } from "../storage/append-journal.js";
import {
  checkedLine,
  keepDamagedCopy,
  readCheckedLines,
  textChecksum,
  type CheckedLines,
} from "../storage/checked-lines.js";
import { writeFileDurable } from "../storage/atomic-write.js";
import { forgetJournalLength } from "../storage/journal-length.js";
import { checkJournalAtStart, lossRecordPath, lossSeqs } from "../storage/journal-loss.js";
import { readTextFile, writeJsonFile } from "../storage/json-file.js";
import { FILES } from "../storage/paths.js";
import { HOME } from "../tokens.js";

const DEDUP_DIR = FILES.sentinelsDedup;
export const DEDUP_LIMIT = 1000;

/** The bounds of each sentinel's state: ids kept `seen`, and journal lines before a compaction. */
export interface DedupLimits {
  seen: number;
  compactAfter: number;
}

export const DEDUP_LIMITS: DedupLimits = { seen: DEDUP_LIMIT, compactAfter: 2 * DEDUP_LIMIT };
/** Journal files kept open at once (each with its length record: two descriptors); the least recently used is closed beyond this. */
export const MAX_OPEN_JOURNALS = 64;

type Change = "now" | "deferred" | "seen";

interface Snapshot {
  seq: number;
  seen: string[];
  inflight: string[];
  delivered: number;
  /** crc32 of the JSON of the four fields above, in this order (absent in files before checksums). */
  checksum?: string;
}

/** What loading a sentinel's files found, when anything was wrong (logged by the engine). */
export interface DedupLoadReport {
  sentinelId: string;
  /** `damaged`: failed its checksum or not a snapshot, moved aside; `missing`: the journal shows there was one. */
  snapshot?: { state: "damaged" | "missing"; copy?: string };
  /** Whole journal lines that failed their check (1-based), and where a copy of the file is kept. */
  damagedLines?: { lines: number[]; copy: string };
  /** Bytes of a torn last line, cut off (`tornAcknowledged`: part of a line the journal's length record counts, lost with it). */
  tornBytes?: number;
  tornAcknowledged?: boolean;
  /**
   * Lines the journal's length record counts as acknowledged that the file no longer holds (cut
   * from its end), their sequence numbers where known, and where the loss is kept until acknowledged.
   */
  missing?: { records: number; bytes: number; seqs?: string; file: string; kept: string };
  /** Why writing the recovered state failed (then the next start finds the same damage again). */
  repairFailed?: string;
  /** The count of accepted events carried on, and event ids now known. */
  delivered: number;
  known: number;
}

/** The journal's first line after a compaction: the sequence and the count the snapshot holds. */
const checkpointLine = (s: Pick<DedupState, "seq" | "delivered">): string =>
  checkedLine(JSON.stringify({ q: s.seq, c: s.delivered }));

const snapshotChecksum = (s: Snapshot): string =>
  textChecksum(JSON.stringify({ seq: s.seq, seen: s.seen, inflight: s.inflight, delivered: s.delivered }));

interface DedupState {
  /** Sequence of the last durable (applied) change. */
  seq: number;
  /** Sequence of the last change handed to the journal (>= seq). */
  nextSeq: number;
  seen: Set<string>;
  inflight: Set<string>;
  delivered: number;
  journalLines: number;
  /** Whether the journal file is known to exist durably (its directory entry synced). */
  journalExists: boolean;
  compacting: boolean;
  /** Counting changes rendered into a batch and not yet applied (for each line's `d`). */
  ahead: number;
}

@injectable()
export class SentinelDedup {
  readonly dir: string;
  private readonly states = new Map<string, DedupState>();
  private readonly loading = new Map<string, Promise<void>>();
  /** Open journals by sentinel id, least recently used first. */
  private readonly journals = new Map<string, Promise<AppendJournal>>();
  /** The journals whose open finished, by sentinel id (to tell idle ones from busy ones). */
  private readonly opened = new Map<string, AppendJournal>();
  /** Changes in progress per sentinel: their journal is not closed under them. */
  private readonly leases = new Map<string, number>();
  /** Journals being closed: reopening waits, so two handles never append to one file at once. */
  private readonly closing = new Map<string, Promise<void>>();

  /** Told what loading found when anything was wrong (the engine logs it). */
  onDamage?: (report: DedupLoadReport) => void;

  /** `limits` is not injected (the daemon keeps the defaults): tests make them small to reach them. */
  constructor(
    @inject(HOME as symbol) home: string,
    private readonly limits: DedupLimits = DEDUP_LIMITS,
  ) {
    this.dir = join(home, DEDUP_DIR);
  }

  /** Loads (once) the state of a sentinel; missing or unreadable files are an empty state. */
  load(sentinelId: string): Promise<void> {
    if (this.states.has(sentinelId)) return Promise.resolve();
    let p = this.loading.get(sentinelId);
    if (!p) {
      p = this.read(sentinelId).then((state) => {
        this.loading.delete(sentinelId);
        if (!this.states.has(sentinelId)) this.states.set(sentinelId, state);
      });
      this.loading.set(sentinelId, p);
    }
    return p;
  }

  /** True when the event was delivered before (seen or in flight). Requires {@link load}. */
  has(sentinelId: string, eventId: string): boolean {
    const s = this.states.get(sentinelId);
    return !!s && (s.seen.has(eventId) || s.inflight.has(eventId));
  }

  delivered(sentinelId: string): number {
    return this.states.get(sentinelId)?.delivered ?? 0;
  }

  /** Every event id the sentinel's state holds (seen, then in flight). */
  known(sentinelId: string): string[] {
    const s = this.states.get(sentinelId);
    return s ? [...s.seen, ...s.inflight] : [];
  }

  inflight(sentinelId: string): string[] {
    return [...(this.states.get(sentinelId)?.inflight ?? [])];
  }

  /** Records a delivery durably: `now` marks it seen, `deferred` keeps it in flight until markSeen. */
  recordDelivery(sentinelId: string, eventId: string, ack: "now" | "deferred"): Promise<void> {
    return this.change(sentinelId, eventId, ack);
  }

  /** Moves an event to `seen` (a deferred delivery reached a terminal state). */
  async markSeen(sentinelId: string, eventId: string): Promise<void> {
    await this.load(sentinelId);
    const s = this.states.get(sentinelId)!;
    if (s.seen.has(eventId) && !s.inflight.has(eventId)) return;
    await this.change(sentinelId, eventId, "seen");
  }

  /** Writes what is queued, then deletes the sentinel's state and files. */
  async remove(sentinelId: string): Promise<void> {
    await this.loading.get(sentinelId);
    await this.closeJournal(sentinelId);
    this.states.delete(sentinelId);
    await rm(this.file(sentinelId, "json"), { force: true });
    // The length record first: a journal never outlives its record's count by a crash in between.
    await forgetJournalLength(this.file(sentinelId, "log"));
    await rm(this.file(sentinelId, "log"), { force: true });
    await rm(lossRecordPath(this.file(sentinelId, "log")), { force: true });
  }

  /** Writes what is queued and closes every open journal (daemon stop). */
  async close(): Promise<void> {
    await Promise.all([...this.journals.keys()].map((id) => this.closeJournal(id)));
  }

  /** Sentinel ids with files here that are not in `known` (left by a crash between two removals). */
  async orphans(known: ReadonlySet<string>): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const ids = new Set(names.filter((n) => /\.(json|log)$/.test(n)).map((n) => n.replace(/\.(json|log)$/, "")));
    return [...ids].filter((id) => !known.has(id));
  }

  private async change(sentinelId: string, eventId: string, a: Change): Promise<void> {
    // Leased from here until the line is queued: the journal is not closed under this change.
    this.leases.set(sentinelId, (this.leases.get(sentinelId) ?? 0) + 1);
    try {
      return await this.changeLeased(sentinelId, eventId, a);
    } finally {
      const left = (this.leases.get(sentinelId) ?? 1) - 1;
      if (left > 0) this.leases.set(sentinelId, left);
      else this.leases.delete(sentinelId);
      // Back within the bound once this journal is idle again.
      if (this.journals.size > MAX_OPEN_JOURNALS)
        void this.opened
          .get(sentinelId)
          ?.drained()
          .then(() => this.closeIdle(sentinelId));
    }
  }

  /** Closes idle journals, least recently used first, while more than the bound are open. */
  private closeIdle(keep?: string): void {
    for (const id of this.journals.keys()) {
      if (this.journals.size <= MAX_OPEN_JOURNALS) break;
      const j = this.opened.get(id);
      if (id !== keep && !this.leases.has(id) && j !== undefined && !j.busy) void this.closeJournal(id);
    }
  }

  private async changeLeased(sentinelId: string, eventId: string, a: Change): Promise<void> {
    for (;;) {
      await this.load(sentinelId);
      const exists = this.states.get(sentinelId)?.journalExists ?? false;
      const journal = await this.journal(sentinelId, exists);
      const s = this.states.get(sentinelId);
      // Closed meanwhile (evicted or removed) or removed: take the current journal and state.
      if (!s || journal.isClosed) continue;
      s.journalExists = true;
      const q = ++s.nextSeq;
      const counts = a !== "seen";
      let rendered = false;
      // Each line carries the count of accepted events once it applies (`d`), so the count survives
      // the loss of the snapshot; rendered when its batch is formed, after every earlier batch settled.
      const text = () => {
        if (counts && !rendered) {
          rendered = true;
          s.ahead += 1;
        }
        return checkedLine(JSON.stringify({ q, e: eventId, a, d: s.delivered + s.ahead }));
      };
      const appended = journal.append(
        text,
        () => {
          if (rendered) s.ahead -= 1;
          rendered = false;
          s.seq = q;
          s.journalLines += 1;
          apply(s, eventId, a, this.limits.seen);
          if (s.journalLines >= this.limits.compactAfter && !s.compacting) {
            s.compacting = true;
            journal
              .exclusive(() => this.compact(sentinelId, s, journal))
              .catch(() => undefined)
              .finally(() => (s.compacting = false));
          }
        },
        { seq: q },
      );
      appended.catch(() => {
        if (rendered) s.ahead -= 1;
        rendered = false;
      });
      return appended;
    }
  }

  /** The sentinel's open journal (opened, and others closed beyond the bound, as needed). */
  private async journal(sentinelId: string, exists: boolean): Promise<AppendJournal> {
    for (;;) {
      const open = this.journals.get(sentinelId);
      if (open) {
        this.journals.delete(sentinelId);
        this.journals.set(sentinelId, open);
        return open;
      }
      const closing = this.closing.get(sentinelId);
      if (!closing) break;
      await closing;
    }
    const opening = AppendJournal.open(this.file(sentinelId, "log"), { mode: 0o600, exists });
    this.journals.set(sentinelId, opening);
    opening.catch(() => {
      if (this.journals.get(sentinelId) === opening) this.journals.delete(sentinelId);
    });
    void opening.then(
      (j) => this.opened.set(sentinelId, j),
      () => undefined,
    );
    // Only idle journals are closed: closing one a change is about to use (or is writing to) made
    // that change reopen it and close another in use, over and over, once more than the bound were
    // in use at once (a livelock at 100% CPU). Beyond the bound while all are busy, more stay open.
    this.closeIdle(sentinelId);
    return opening;
  }

  private closeJournal(sentinelId: string): Promise<void> {
    const open = this.journals.get(sentinelId);
    if (!open) return this.closing.get(sentinelId) ?? Promise.resolve();
    this.journals.delete(sentinelId);
    this.opened.delete(sentinelId);
    const closing = open
      .then((j) => j.close())
      .catch(() => undefined)
      .finally(() => {
        if (this.closing.get(sentinelId) === closing) this.closing.delete(sentinelId);
      });
    this.closing.set(sentinelId, closing);
    return closing;
  }

  /**
   * Snapshot, then empty the journal down to one checkpoint line carrying the count (so a lost
   * snapshot never loses the count); runs between two group commits of `journal`.
   */
  private async compact(sentinelId: string, s: DedupState, journal: AppendJournal): Promise<void> {
    if (this.states.get(sentinelId) !== s) return;
    await this.writeSnapshot(sentinelId, s);
    await journal.truncate(checkpointLine(s), s.seq);
    s.journalLines = 0;
  }

  private async writeSnapshot(
    sentinelId: string,
    s: Pick<DedupState, "seq" | "seen" | "inflight" | "delivered">,
  ): Promise<void> {
    const snapshot: Snapshot = { seq: s.seq, seen: [...s.seen], inflight: [...s.inflight], delivered: s.delivered };
    await writeJsonFile(this.file(sentinelId, "json"), { ...snapshot, checksum: snapshotChecksum(snapshot) });
  }

  /**
   * After damage was found and kept aside, writes what was recovered as a fresh snapshot and a
   * journal of one checkpoint line (as a compaction would; the journal is not open yet), so the
   * same damage is not found, copied and told again at every start. On failure (a full disk) the
   * files stay as they are and the next start tries again.
   */
  private async repair(sentinelId: string, s: DedupState, report: DedupLoadReport): Promise<void> {
    try {
      await this.writeSnapshot(sentinelId, s);
      // The journal is replaced: its length record goes first (the next open records the new file).
      await forgetJournalLength(this.file(sentinelId, "log"));
      await writeFileDurable(this.file(sentinelId, "log"), checkpointLine(s), { mode: 0o600 });
      s.journalLines = 0;
      s.journalExists = true;
    } catch (err) {
      report.repairFailed = err instanceof Error ? err.message : String(err);
    }
  }

  private async read(sentinelId: string): Promise<DedupState> {
    const report: DedupLoadReport = { sentinelId, delivered: 0, known: 0 };
    const snapPath = this.file(sentinelId, "json");
    const logPath = this.file(sentinelId, "log");
    const snapText = await readTextFile(snapPath).catch(() => undefined);
    const raw = await readFile(logPath).catch(() => undefined);
    const files = readDedupTexts(snapText, raw?.toString("utf8"), this.limits.seen);
    if (files.snapshot === "damaged") {
      const copy = `${snapPath}.damaged-${Date.now()}`;
      await rename(snapPath, copy);
      report.snapshot = { state: "damaged", copy };
    } else if (files.snapshot === "missing") report.snapshot = { state: "missing" };
    if (files.lines.damaged.length > 0)
      report.damagedLines = { lines: files.lines.damaged, copy: await keepDamagedCopy(logPath, Date.now()) };
    // Fewer lines than the length record counts: acknowledged changes cut from the end (kept in `.missing`).
    const length = raw ? await checkJournalAtStart(logPath, { lastPresentSeq: files.state.seq }) : undefined;
    if (length?.loss) {
      const { loss } = length.loss;
      const seqs = lossSeqs(loss);
      report.missing = {
        records: loss.records,
        bytes: loss.bytes,
        ...(seqs ? { seqs } : {}),
        file: logPath,
        kept: lossRecordPath(logPath),
      };
    }
    if (length?.check?.torn.acknowledged) report.tornAcknowledged = true;
    // Bytes after the last newline are a line cut short by a crash: cut them off before appending.
    if (raw && files.lines.tornBytes > 0) {
      report.tornBytes = files.lines.tornBytes;
      await truncate(logPath, raw.length - files.lines.tornBytes);
    }
    const state: DedupState = {
      ...files.state,
      nextSeq: files.state.seq,
      journalExists: raw !== undefined,
      compacting: false,
      ahead: 0,
    };
    if (report.snapshot || report.damagedLines) await this.repair(sentinelId, state, report);
    if (report.snapshot || report.damagedLines || report.tornBytes || report.missing) {
      report.delivered = state.delivered;
      report.known = state.seen.size + state.inflight.size;
      this.onDamage?.(report);
    }
    return state;
  }

  private file(sentinelId: string, ext: "json" | "log"): string {
    return join(this.dir, `${sentinelId}.${ext}`);
  }
}

/** The snapshot, or undefined when it fails its checksum or is not a snapshot (one without a checksum is from before them). */
function parseSnapshot(text: string): Snapshot | undefined {
  let v: Partial<Snapshot> | null;
  try {
    v = JSON.parse(text) as Partial<Snapshot> | null;
  } catch {
    return undefined;
  }
  if (
    !v ||
    typeof v.seq !== "number" ||
    !Array.isArray(v.seen) ||
    !Array.isArray(v.inflight) ||
    typeof v.delivered !== "number"
  )
    return undefined;
  const snap = {
    seq: v.seq,
    seen: v.seen.filter((e) => typeof e === "string"),
    inflight: v.inflight.filter((e) => typeof e === "string"),
    delivered: v.delivered,
  };
  if (v.checksum !== undefined && v.checksum !== snapshotChecksum(snap)) return undefined;
  return snap;
}

function apply(
  s: Pick<DedupState, "seen" | "inflight" | "delivered">,
  eventId: string,
  a: Change,
  seenLimit: number,
): void {
  if (a === "deferred") {
    s.delivered += 1;
    s.inflight.add(eventId);
    return;
  }
  if (a === "now") s.delivered += 1;
  s.inflight.delete(eventId);
  s.seen.delete(eventId);
  s.seen.add(eventId);
  while (s.seen.size > seenLimit) s.seen.delete(s.seen.values().next().value as string);
}

/** A sentinel's dedup files as read, with nothing changed (loading and `svc doctor` share it). */
export interface DedupFilesRead {
  /** `damaged`: fails its checksum or is not a snapshot; `missing`: absent though the journal starts past the first change. */
  snapshot: "ok" | "damaged" | "missing" | "none";
  lines: CheckedLines;
  state: Pick<DedupState, "seq" | "seen" | "inflight" | "delivered" | "journalLines">;
}

/** Reads a sentinel's snapshot and journal texts (undefined: the file is absent) into its state. */
export function readDedupTexts(
  snapText: string | undefined,
  logText: string | undefined,
  seenLimit: number = DEDUP_LIMIT,
): DedupFilesRead {
  const snap = snapText === undefined ? undefined : parseSnapshot(snapText);
  const state: DedupFilesRead["state"] = {
    seq: snap?.seq ?? 0,
    seen: new Set((snap?.seen ?? []).slice(-seenLimit)),
    inflight: new Set(snap?.inflight ?? []),
    delivered: snap?.delivered ?? 0,
    journalLines: 0,
  };
  const lines = readCheckedLines(logText ?? "");
  let first: number | undefined;
  for (const { text } of lines.records) {
    state.journalLines += 1;
    let rec: { q?: unknown; e?: unknown; a?: unknown; d?: unknown; c?: unknown };
    try {
      rec = JSON.parse(text) as typeof rec;
    } catch {
      continue;
    }
    if (typeof rec.q !== "number") continue;
    first ??= rec.q;
    // The count a line carries holds even when the snapshot before it was lost.
    const carried = typeof rec.d === "number" ? rec.d : typeof rec.c === "number" ? rec.c : 0;
    if (
      typeof rec.e === "string" &&
      rec.q > state.seq &&
      (rec.a === "now" || rec.a === "deferred" || rec.a === "seen")
    ) {
      state.seq = rec.q;
      apply(state, rec.e, rec.a, seenLimit);
    }
    state.delivered = Math.max(state.delivered, carried);
  }
  // No snapshot, yet the journal starts past the first change: the snapshot was lost.
  const snapshot = snap
    ? "ok"
    : snapText !== undefined
      ? "damaged"
      : first !== undefined && first > 1
        ? "missing"
        : "none";
  return { snapshot, lines, state };
}
