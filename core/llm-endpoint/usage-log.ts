/**
 * The usage log: one checksummed JSON line per model call the sidecar carried (a CallRecord:
 * model, tokens, latency, status; never a body or a key), in one file per UTC day under
 * `$SVC_HOME/llm-endpoint/usage-YYYY-MM-DD.jsonl`, appended with group commit (durable when the
 * append resolves). Reading a day tells a torn tail (dropped) from damage (counted and told).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { AppendJournal } from "../storage/append-journal.js";
import { checkedLine, readCheckedLines } from "../storage/checked-lines.js";
import { utcDay, type CallRecord } from "./protocol.js";

export const USAGE_DIR = "llm-endpoint";

export function usageFile(home: string, day: string): string {
  return join(home, USAGE_DIR, `usage-${day}.jsonl`);
}

export interface DayUsage {
  records: CallRecord[];
  /** Whole lines whose checksum failed (their calls are lost to the totals). */
  damaged: number;
  tornBytes: number;
}

/** Reads one day's records; a missing file is an empty day. */
export async function readDay(home: string, day: string): Promise<DayUsage> {
  let text: string;
  try {
    text = await readFile(usageFile(home, day), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { records: [], damaged: 0, tornBytes: 0 };
    throw err;
  }
  const lines = readCheckedLines(text);
  const records: CallRecord[] = [];
  let damaged = lines.damaged.length;
  for (const r of lines.records) {
    try {
      records.push(JSON.parse(r.text) as CallRecord);
    } catch {
      damaged++;
    }
  }
  return { records, damaged, tornBytes: lines.tornBytes };
}

/** Appends records to the file of their day, rolling to the next day's file as records cross midnight (UTC). */
export class UsageLog {
  private journal: AppendJournal | undefined;
  private day: string | undefined;
  private opening: Promise<AppendJournal> | undefined;

  constructor(private readonly home: string) {}

  append(record: CallRecord): Promise<void> {
    const day = utcDay(record.at);
    const line = checkedLine(JSON.stringify(record));
    return this.journalFor(day).then((j) => j.append(line));
  }

  private journalFor(day: string): Promise<AppendJournal> {
    if (this.day === day && this.opening) return this.opening;
    const previous = this.opening;
    this.day = day;
    this.opening = (async () => {
      const old = await previous?.catch(() => undefined);
      await old?.close().catch(() => undefined);
      this.journal = await AppendJournal.open(usageFile(this.home, day), { cutTornTail: true });
      return this.journal;
    })();
    // A failed open is retried by the next append rather than kept.
    this.opening.catch(() => {
      if (this.day === day) {
        this.day = undefined;
        this.opening = undefined;
      }
    });
    return this.opening;
  }

  async close(): Promise<void> {
    const j = await this.opening?.catch(() => undefined);
    this.opening = undefined;
    this.day = undefined;
    await j?.close();
  }
}
