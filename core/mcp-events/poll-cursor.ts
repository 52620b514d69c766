/**
 * A poll cursor: opaque to clients, it names a position in one poll lease's buffer: the daemon
 * boot, the lease (a lease made again after lapsing is another one) and the sequence number of
 * the next event. A cursor of another boot or lease cannot be served from: the caller gets a gap
 * (`truncated: true`) and a fresh cursor.
 */
import { invalidParams } from "./rpc-errors.js";

export interface PollPosition {
  boot: string;
  lease: string;
  seq: number;
}

export function encodePollCursor(p: PollPosition): string {
  return Buffer.from(`${p.boot}.${p.lease}.${p.seq}`, "utf8").toString("base64url");
}

/** Throws -32602 `invalid_cursor` for anything {@link encodePollCursor} did not make. */
export function decodePollCursor(cursor: string): PollPosition {
  const parts = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  const [boot, lease, seq] = parts;
  if (
    parts.length !== 3 ||
    !/^[0-9a-f]+$/.test(boot!) ||
    !/^[0-9a-f]+$/.test(lease!) ||
    !/^(0|[1-9][0-9]{0,15})$/.test(seq!)
  ) {
    throw invalidParams(
      "invalid_cursor",
      "cursor is not one events/poll gave: pass the cursor of the last answer, or null to start from now",
    );
  }
  return { boot: boot!, lease: lease!, seq: Number(seq) };
}
