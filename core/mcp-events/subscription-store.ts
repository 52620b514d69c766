/**
 * The webhook subscriptions' own records, `$SVC_HOME/mcp-subscriptions.json`: one checksummed
 * document (core/storage/checked-doc.ts) mapping each subscription id to its sentinel, key and
 * expiry, rewritten atomically on every change. Changes are serialized; a change is in memory only
 * once its write returned. A damaged file is copied aside (`.damaged-<ms>`) and read as empty.
 */
import { join } from "node:path";
import { z } from "zod";
import { readCheckedDoc, writeCheckedDoc } from "../storage/checked-doc.js";
import { keepDamagedCopy } from "../storage/checked-lines.js";
import type { Logger } from "../runtime/logger.js";

export const SUBSCRIPTIONS_FILE = "mcp-subscriptions.json";
const VERSION = 1;
const FIELD = "subscriptions";

const recordSchema = z.object({
  id: z.string(),
  /** null while its sentinel is being created (written ahead of it). */
  sentinelId: z.string().nullable(),
  principalKey: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  url: z.string(),
  /** Epoch ms when it lapses; null: never (granted for `ttlMs: null`). */
  expiresAt: z.number().nullable(),
  createdAt: z.number(),
  refreshedAt: z.number(),
});

export type SubscriptionRecord = z.infer<typeof recordSchema>;

export type StoreRead = "ok" | "missing" | "damaged";

export class SubscriptionStore {
  private records = new Map<string, SubscriptionRecord>();
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(private readonly path: string) {}

  /** Opens the store under `home`; says how the file read (`damaged`: copied aside and logged, read as empty). */
  static async open(home: string, logger: Logger, now: number): Promise<{ store: SubscriptionStore; read: StoreRead }> {
    const store = new SubscriptionStore(join(home, SUBSCRIPTIONS_FILE));
    const read = await readCheckedDoc(store.path, VERSION, FIELD, z.array(recordSchema));
    if (read.state === "ok") for (const r of read.value) store.records.set(r.id, r);
    if (read.state === "damaged") {
      const copy = await keepDamagedCopy(store.path, now);
      logger.error(
        "the MCP subscription records are damaged: read as none; their sentinels are kept (remove them with `svc sentinel unwatch`)",
        { file: store.path, reason: read.reason, copy },
      );
    }
    return { store, read: read.state };
  }

  get(id: string): SubscriptionRecord | undefined {
    return this.records.get(id);
  }

  all(): SubscriptionRecord[] {
    return [...this.records.values()];
  }

  countFor(principalKey: string): number {
    let n = 0;
    for (const r of this.records.values()) if (r.principalKey === principalKey) n++;
    return n;
  }

  /** Adds or replaces a record; durable when it resolves. */
  put(record: SubscriptionRecord): Promise<void> {
    return this.change((m) => m.set(record.id, record));
  }

  /** Removes a record (nothing when absent); durable when it resolves. */
  delete(id: string): Promise<void> {
    return this.change((m) => m.delete(id));
  }

  private change(apply: (m: Map<string, SubscriptionRecord>) => void): Promise<void> {
    const run = async () => {
      const next = new Map(this.records);
      apply(next);
      await writeCheckedDoc(this.path, VERSION, FIELD, [...next.values()]);
      this.records = next;
    };
    const done = this.tail.then(run, run);
    this.tail = done.catch(() => undefined);
    return done;
  }
}
