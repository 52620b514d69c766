/**
 * Free space on the filesystem holding `$SVC_HOME`, and the rule svc writes by when it runs short:
 * the daemon's own room comes first (runtime.json, the log, the next journal records), and an
 * optional write (a compaction) runs only when it leaves that room free. See docs/storage.md,
 * "A full disk".
 */
import { statfs } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { SvcError } from "../errors.js";

export interface DiskSpace {
  /** Bytes this process may still write (`bavail × bsize`: blocks kept back for root are not counted). */
  free: number;
  /** The filesystem's block size: a file takes whole blocks. */
  blockSize: number;
}

/** Reads the free space of the filesystem holding a path; undefined where it cannot be read. */
export type SpaceProbe = (path: string) => Promise<DiskSpace | undefined>;

/** The real probe (`statfs`), asked of the nearest existing folder when `path` does not exist yet. */
export const diskSpace: SpaceProbe = async (path) => {
  for (let p = path; ; p = dirname(p)) {
    try {
      const s = await statfs(p);
      return { free: s.bavail * s.bsize, blockSize: s.bsize };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== "ENOENT" && code !== "ENOTDIR") || dirname(p) === p) return undefined;
    }
  }
};

/**
 * The room the daemon keeps for itself: 64 KiB, or 16 blocks where blocks are larger than 4 KiB.
 * It holds runtime.json and its temporary copy, the first log lines and the first journal records
 * of a start (a delivery attempt, a reaped row), with room to spare.
 */
export function daemonRoom(blockSize: number): number {
  return Math.max(64 * 1024, 16 * blockSize);
}

export interface RoomCheck {
  /** True when the free space covers `need`. */
  ok: boolean;
  free: number;
  /** The files' bytes rounded up to whole blocks, plus {@link daemonRoom}. */
  need: number;
}

/**
 * Whether files of `sizes` bytes (each rounded up to whole blocks) fit on the filesystem holding
 * `path` and still leave the daemon's room free; `[]` asks for the room alone (a start). Undefined
 * when the free space cannot be read (then nothing is held back: the write runs as before).
 */
export async function roomFor(
  path: string,
  sizes: readonly number[],
  probe: SpaceProbe = diskSpace,
): Promise<RoomCheck | undefined> {
  const space = await probe(path);
  if (!space) return undefined;
  const b = space.blockSize > 0 ? space.blockSize : 4096;
  const need = sizes.reduce((n, s) => n + Math.ceil(s / b) * b, 0) + daemonRoom(b);
  return { ok: space.free >= need, free: space.free, need };
}

/** KiB, rounded up (a need) or down (what is free), for messages. */
export const kib = (bytes: number, round: "up" | "down" = "up"): number =>
  (round === "up" ? Math.ceil : Math.floor)(bytes / 1024);

/**
 * The start refused for lack of space (`unavailable`), naming what it needs and what is free.
 * `cause`: the write that failed, when a start ran out of space after its check.
 */
export function noRoomToStart(home: string, room: RoomCheck, cause?: unknown): SvcError {
  const e = cause as NodeJS.ErrnoException | undefined;
  const failed = e?.code ? ` (${e.code}${typeof e.path === "string" ? ` writing ${basename(e.path)}` : ""})` : "";
  const kept = cause
    ? "no accepted event is lost: the journals hold every one"
    : "nothing was written: the journals and the outbox are as the last run left them";
  return new SvcError(
    "unavailable",
    `the disk holding $SVC_HOME (${home}) is full${failed}: svc needs about ${kib(room.need)} KiB free to start ` +
      `(runtime.json, the log and the first journal records) and ${kib(room.free, "down")} KiB are free; ` +
      `free space on that filesystem and start again (${kept})`,
    { cause, details: { freeBytes: room.free, neededBytes: room.need } },
  );
}
