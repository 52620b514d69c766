/**
 * A small JSON document changed by many concurrent callers, written in groups: changes that arrive
 * while a write is in flight are applied together, in arrival order, by the next write (one
 * cross-process lock, one read, one atomic durable write for the whole group), and each caller is
 * answered once that write is durable. A burst of N changes costs a handful of writes instead of
 * N, each a full rewrite under a contended lock.
 *
 * A change that throws is refused alone: its caller gets the error and the group goes on from the
 * value before it. A write that fails fails every change of its group (none of them is on disk).
 * A change runs inside its group's write, so it must not wait for another update of the same
 * document (that update would wait for this group: a deadlock).
 */
import type { AtomicWriteOptions } from "./atomic-write.js";
import { updateJsonFile } from "./json-file.js";

/** Returns the next value, or `undefined` to leave the document as it is. */
export type JsonChange<T> = (current: T | undefined) => T | undefined | Promise<T | undefined>;

interface Queued<T> {
  change: JsonChange<T>;
  resolve(value: T | undefined): void;
  reject(err: unknown): void;
  error?: { err: unknown };
}

export class JsonGroupCommit<T> {
  private queue: Queued<T>[] = [];
  private writing = false;

  /** `written` sees each value once it is durable (e.g. to refresh an in-memory copy). */
  constructor(
    readonly path: string,
    private readonly options: AtomicWriteOptions = {},
    private readonly written?: (value: T) => void,
  ) {}

  /** Queues `change`; resolves with the document as written (or as read, when nothing changed). */
  update(change: JsonChange<T>): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ change, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) await this.commit(this.queue.splice(0));
    } finally {
      this.writing = false;
    }
  }

  private async commit(group: Queued<T>[]): Promise<void> {
    let value: T | undefined;
    try {
      value = await updateJsonFile<T>(
        this.path,
        async (current) => {
          let next = current;
          let changed = false;
          for (const q of group) {
            try {
              const out = await q.change(next);
              if (out !== undefined) [next, changed] = [out, true];
            } catch (err) {
              q.error = { err };
            }
          }
          return changed ? next : undefined;
        },
        this.options,
      );
      if (value !== undefined) this.written?.(value);
    } catch (err) {
      for (const q of group) q.reject(err);
      return;
    }
    for (const q of group) q.error ? q.reject(q.error.err) : q.resolve(value);
  }
}
