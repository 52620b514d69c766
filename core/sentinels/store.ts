/**
 * `$SVC_HOME/sentinels.json`: the sentinel records. Every change is a read-modify-write under the
 * file's cross-process lock, written atomically and fsynced (kill -9 leaves the old or the new
 * file), and answered once durable. Changes made while a write is in flight share the next write
 * (group commit, core/storage/json-group-commit.ts): 100 concurrent creates cost a few writes,
 * not 100 full rewrites queued on the lock. Reads are served from memory: only the daemon writes
 * this file.
 */
import { inject, injectable } from "tsyringe";
import { SvcError } from "../errors.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { readJsonFile } from "../storage/json-file.js";
import { JsonGroupCommit } from "../storage/json-group-commit.js";
import { homeFile } from "../storage/paths.js";
import { HOME } from "../tokens.js";
import type { SentinelRecordStore } from "./record-store.js";
import type { SentinelRecord } from "./service.js";

interface SentinelsFile {
  version: 1;
  sentinels: SentinelRecord[];
}

@injectable()
export class SentinelStore implements SentinelRecordStore {
  readonly path: string;
  private readonly records = new Map<string, SentinelRecord>();
  private readonly file: JsonGroupCommit<SentinelsFile>;

  constructor(@inject(HOME as symbol) home: string) {
    this.path = homeFile(home, "sentinels");
    this.file = new JsonGroupCommit<SentinelsFile>(this.path, { mode: 0o600 }, (next) =>
      this.replaceAll(checked(this.path, next).sentinels),
    );
  }

  /** (Re)reads the file into memory. A file that is not a sentinels file is an error naming it. */
  async load(): Promise<SentinelRecord[]> {
    const file = await readJsonFile<SentinelsFile>(this.path);
    this.replaceAll(file === undefined ? [] : checked(this.path, file).sentinels);
    return this.all();
  }

  all(): SentinelRecord[] {
    return [...this.records.values()];
  }

  get(id: string): SentinelRecord | undefined {
    return this.records.get(id);
  }

  async insert(rec: SentinelRecord): Promise<void> {
    await this.write((list) => {
      if (list.some((r) => r.id === rec.id)) throw new SvcError("conflict", `sentinel ${rec.id} already exists`);
      return [...list, rec];
    });
  }

  /** Applies `mutate` to the stored record under the lock; throws `not_found`. */
  async update(
    id: string,
    mutate: (rec: SentinelRecord) => SentinelRecord | Promise<SentinelRecord>,
  ): Promise<SentinelRecord> {
    let out: SentinelRecord | undefined;
    await this.write(async (list) => {
      const i = list.findIndex((r) => r.id === id);
      if (i < 0) throw new SvcError("not_found", `no sentinel ${id}`);
      out = await mutate(structuredClone(list[i]!));
      return list.map((r, j) => (j === i ? out! : r));
    });
    return out!;
  }

  /** Removes the record; false when there was none. */
  async remove(id: string): Promise<boolean> {
    let found = false;
    await this.write((list) => {
      found = list.some((r) => r.id === id);
      return found ? list.filter((r) => r.id !== id) : undefined;
    });
    return found;
  }

  private async write(
    mutate: (list: SentinelRecord[]) => SentinelRecord[] | undefined | Promise<SentinelRecord[] | undefined>,
  ): Promise<void> {
    await this.file.update(async (current) => {
      const list = current === undefined ? [] : checked(this.path, current).sentinels;
      const changed = await mutate(list);
      return changed === undefined ? undefined : { ...current, version: 1, sentinels: changed };
    });
  }

  private replaceAll(list: SentinelRecord[]): void {
    this.records.clear();
    for (const r of list) this.records.set(r.id, r);
  }
}

function checked(path: string, file: SentinelsFile): SentinelsFile {
  if (typeof file !== "object" || file === null || !Array.isArray(file.sentinels)) {
    throw new SvcError(
      "config_invalid",
      `${path} is not a sentinels file (expected {"version": 1, "sentinels": [...]})`,
    );
  }
  return file;
}

/**
 * `svc doctor`'s check of sentinels.json (read-only): it parses and is a sentinels file. Returns
 * the stored records (none when it cannot be read) for the checks that compare against them.
 */
export async function checkSentinelsFile(
  home: string,
): Promise<{ findings: DoctorFinding[]; sentinels: SentinelRecord[] }> {
  const path = homeFile(home, "sentinels");
  try {
    const file = await readJsonFile<SentinelsFile>(path);
    return {
      findings: [],
      sentinels: file === undefined ? [] : checked(path, file).sentinels.filter((r) => typeof r?.id === "string"),
    };
  } catch (err) {
    const finding: DoctorFinding = {
      severity: "error",
      file: "sentinels.json",
      message: `${(err as Error).message}: the daemon cannot start while it is so, and the other checks cannot tell which sentinels exist`,
      fix: 'restore it from a backup, or fix it by hand (its records are {"version":1,"sentinels":[…]}); the sentinels\' outbox rows, secrets and dedup files are kept meanwhile',
    };
    return { findings: [finding], sentinels: [] };
  }
}
