import { createHash } from "node:crypto";
import { mkdir, open, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { SvcError, fsyncDir } from "../../../core/plugin-api/index.js";
import type { BodyRef } from "./row.js";

/**
 * Exact serialized bodies, one file per row, written once at the compaction after the row was
 * added (fsynced, mode 0600) and never rewritten: a status change touches only the journal, and
 * bodies are read from disk for each attempt rather than held in memory.
 */
export class BodyStore {
  private dirDirty = false;

  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Writes a row's body file (replacing a torn one left by a crash). {@link syncDir} makes its entry durable. */
  async write(ref: BodyRef, body: Buffer): Promise<void> {
    const handle = await open(join(this.dir, ref.file), "w", 0o600);
    try {
      await handle.writeFile(body);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    this.dirDirty = true;
  }

  /** Makes new files' directory entries durable (one fsync for a whole batch). */
  async syncDir(): Promise<void> {
    if (!this.dirDirty) return;
    this.dirDirty = false;
    await fsyncDir(this.dir);
  }

  /** The exact bytes of a row's body; throws `internal` when the file is missing or altered. */
  async read(ref: BodyRef): Promise<Buffer> {
    let body: Buffer;
    try {
      body = await readFile(join(this.dir, ref.file));
    } catch (err) {
      throw new SvcError("internal", `the stored body ${ref.file} is missing from the outbox`, { cause: err });
    }
    if (body.length !== ref.length || sha256(body) !== ref.sha256) {
      throw new SvcError("internal", `the stored body ${ref.file} does not match its recorded length and sha256`);
    }
    return body;
  }

  async remove(ref: BodyRef): Promise<void> {
    await this.removeFile(ref.file);
  }

  async list(): Promise<string[]> {
    return readdir(this.dir);
  }

  async readRaw(file: string): Promise<Buffer> {
    return readFile(join(this.dir, file));
  }

  async removeFile(file: string): Promise<void> {
    await unlink(join(this.dir, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
}

export function bodyRef(requestId: string, body: Buffer): BodyRef {
  return { file: `${requestId}.json`, length: body.length, sha256: sha256(body) };
}

export function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}
