import { createHash } from "node:crypto";
import { mkdir, open, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { SvcError, fsyncDir, writingFile } from "../../../core/plugin-api/index.js";
import type { BodyRef } from "./row.js";

/** One body placed in a segment: the bytes and the ref that will point at them. */
export interface SegmentEntry {
  requestId: string;
  /** The row's sentinel and event, framed with the body (an MCP EventOccurrence body does not name its sentinel). */
  sentinelId?: string;
  eventId?: string;
  body: Buffer;
  ref: BodyRef;
}

/** A body to place in a segment, with what its frame names. */
export type SegmentBody = Pick<SegmentEntry, "requestId" | "sentinelId" | "eventId" | "body">;

/**
 * Exact serialized bodies, written once and never rewritten: each compaction appends the bodies
 * staged since the previous one to one new segment file (`seg-<seq>.bin`, one fsync, one directory
 * fsync), and a row's {@link BodyRef} names its segment, offset and length. Each entry is framed by
 * a JSON header line (`{"requestId","length"}`, plus `"sentinelId","eventId"` for a body that is not
 * an envelope, which names them itself) so the rows can be rebuilt from the segments alone.
 * A segment is deleted once no row references it. Files from the earlier layout (one whole file per
 * body, no `offset`) are read and removed the same way. A body read here is checked against its
 * length and sha256 (the outbox keeps recent pending bodies in memory: outbox/hot-bodies.ts).
 */
export class BodyStore {
  private readonly refs = new Map<string, number>();
  /** Bytes of each segment and bytes of it still referenced, to find sparse segments. */
  private readonly sizes = new Map<string, number>();
  private readonly live = new Map<string, number>();
  private readonly writing = new Set<string>();

  constructor(readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  /** A segment name for the compaction at `seq` that no known file has (a second compaction at one seq gets a suffix). */
  segmentName(seq: number): string {
    const taken = (f: string) => this.sizes.has(f) || this.refs.has(f) || this.writing.has(f);
    let name = `seg-${seq}.bin`;
    for (let k = 1; taken(name); k++) name = `seg-${seq}-${k}.bin`;
    return name;
  }

  /** Lays out `bodies` in a new segment named `file`; returns the entries with their refs (nothing is written yet). */
  plan(file: string, bodies: SegmentBody[]): { entries: SegmentEntry[]; chunks: Buffer[] } {
    const entries: SegmentEntry[] = [];
    const chunks: Buffer[] = [];
    let offset = 0;
    for (const { requestId, sentinelId, eventId, body } of bodies) {
      // Only where needed: frames count against a segment's live share (see sparse()).
      const names = isEnvelope(body) ? {} : { sentinelId, eventId };
      const header = Buffer.from(JSON.stringify({ requestId, length: body.length, ...names }) + "\n", "utf8");
      chunks.push(header, body, NEWLINE);
      offset += header.length;
      entries.push({
        requestId,
        sentinelId,
        eventId,
        body,
        ref: { file, offset, length: body.length, sha256: sha256(body) },
      });
      offset += body.length + 1;
    }
    this.writing.add(file);
    this.sizes.set(file, offset);
    return { entries, chunks };
  }

  /** Writes a planned segment durably (data, then its directory entry). */
  async writeSegment(file: string, chunks: Buffer[]): Promise<void> {
    await writingFile(join(this.dir, file), async () => {
      const handle = await open(join(this.dir, file), "wx", 0o600);
      try {
        const data = Buffer.concat(chunks);
        let written = 0;
        while (written < data.length) written += (await handle.write(data, written)).bytesWritten;
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await fsyncDir(this.dir);
    });
  }

  /** Ends a segment's write (successful or not); deletes it if no row references it by then. */
  async settle(file: string): Promise<void> {
    this.writing.delete(file);
    if (this.refs.get(file)) return;
    this.sizes.delete(file);
    this.live.delete(file);
    await this.removeFile(file);
  }

  /** Records the size of a segment found at startup. */
  noteSize(file: string, size: number): void {
    if (file.endsWith(".bin")) this.sizes.set(file, size);
  }

  retain(ref: BodyRef): void {
    this.refs.set(ref.file, (this.refs.get(ref.file) ?? 0) + 1);
    this.live.set(ref.file, (this.live.get(ref.file) ?? 0) + ref.length);
  }

  /**
   * Drops one reference; the file goes once none is left (and it is not being written). A ref
   * never retained (a body still staged in the journal) has no file: nothing to do.
   */
  async release(ref: BodyRef): Promise<void> {
    const held = this.refs.get(ref.file);
    if (held === undefined) return;
    this.live.set(ref.file, (this.live.get(ref.file) ?? 0) - ref.length);
    const n = held - 1;
    if (n > 0) return void this.refs.set(ref.file, n);
    this.refs.delete(ref.file);
    this.live.delete(ref.file);
    this.sizes.delete(ref.file);
    if (!this.writing.has(ref.file)) await this.removeFile(ref.file);
  }

  /** Segments less than half of whose bytes are still referenced (their live bodies are worth moving). */
  sparse(): Set<string> {
    const out = new Set<string>();
    for (const [file, size] of this.sizes) {
      if (!this.writing.has(file) && this.refs.has(file) && (this.live.get(file) ?? 0) * 2 < size) out.add(file);
    }
    return out;
  }

  /** The exact bytes of a row's body; throws `internal` when the file is missing or altered. */
  async read(ref: BodyRef): Promise<Buffer> {
    let body: Buffer;
    try {
      if (ref.offset === undefined) body = await readFile(join(this.dir, ref.file));
      else {
        const handle = await open(join(this.dir, ref.file), "r");
        try {
          body = Buffer.alloc(ref.length);
          const { bytesRead } = await handle.read(body, 0, ref.length, ref.offset);
          body = body.subarray(0, bytesRead);
        } finally {
          await handle.close();
        }
      }
    } catch (err) {
      throw new SvcError("internal", `the stored body ${ref.file} is missing from the outbox`, { cause: err });
    }
    if (body.length !== ref.length || sha256(body) !== ref.sha256) {
      throw new SvcError("internal", `the stored body ${ref.file} does not match its recorded length and sha256`);
    }
    return body;
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

const NEWLINE = Buffer.from("\n");
const ENVELOPE_START = Buffer.from('{"id":"');

/** A webhook envelope (envelope.ts serializes `id` first, and `sentinelId` within). */
function isEnvelope(body: Buffer): boolean {
  return body.subarray(0, ENVELOPE_START.length).equals(ENVELOPE_START);
}

/** Splits a segment into its framed entries; stops at a torn or unreadable entry. */
export function readSegmentEntries(file: string, data: Buffer): SegmentEntry[] {
  const entries: SegmentEntry[] = [];
  let pos = 0;
  while (pos < data.length) {
    const nl = data.indexOf(0x0a, pos);
    if (nl < 0) break;
    let header: { requestId?: unknown; length?: unknown; sentinelId?: unknown; eventId?: unknown };
    try {
      header = JSON.parse(data.subarray(pos, nl).toString("utf8")) as typeof header;
    } catch {
      break;
    }
    if (typeof header.requestId !== "string" || typeof header.length !== "number") break;
    const offset = nl + 1;
    if (offset + header.length > data.length) break;
    const body = data.subarray(offset, offset + header.length);
    const named =
      typeof header.sentinelId === "string" && typeof header.eventId === "string"
        ? { sentinelId: header.sentinelId, eventId: header.eventId }
        : {};
    entries.push({
      requestId: header.requestId,
      ...named,
      body,
      ref: { file, offset, length: body.length, sha256: sha256(body) },
    });
    pos = offset + header.length + 1;
  }
  return entries;
}

/** The ref of a body staged inline in the journal, before a compaction places it in a segment. */
export function stagedRef(requestId: string, body: Buffer): BodyRef {
  return { file: `${requestId}.json`, length: body.length, sha256: sha256(body) };
}

export function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}
