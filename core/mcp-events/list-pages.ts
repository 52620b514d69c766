/**
 * `events/list` pages: the catalog's event types in its order, {@link L.listPageSize} a page. The cursor is opaque: the offset of the
 * next page and a hash of the whole list, so a cursor of a list that has changed since answers
 * -32602 `invalid_cursor` (list again from the start) rather than a page that skips or repeats.
 */
import { createHash } from "node:crypto";
import type { EventCatalog, EventTypeDescriptor } from "./catalog-types.js";
import { MCP_EVENTS_LIMITS as L } from "./limits.js";
import { invalidParams } from "./rpc-errors.js";
import { canonicalJson } from "./subscription-id.js";

export interface EventListPage {
  events: EventTypeDescriptor[];
  nextCursor?: string;
}

export async function listEventTypes(
  catalog: EventCatalog,
  cursor: string | undefined,
  pageSize: number = L.listPageSize,
): Promise<EventListPage> {
  const all = await catalog.list();
  const hash = createHash("sha256").update(canonicalJson(all), "utf8").digest("hex").slice(0, 16);
  const offset = cursor === undefined ? 0 : offsetOf(cursor, hash, all.length);
  const end = offset + pageSize;
  return {
    events: all.slice(offset, end),
    ...(end < all.length ? { nextCursor: Buffer.from(`${end}.${hash}`, "utf8").toString("base64url") } : {}),
  };
}

function offsetOf(cursor: string, hash: string, length: number): number {
  const m = /^(0|[1-9][0-9]{0,8})\.([0-9a-f]{16})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m || Number(m[1]) > length)
    throw invalidParams("invalid_cursor", "cursor is not one events/list gave: list from the start (no cursor)");
  if (m[2] !== hash)
    throw invalidParams(
      "invalid_cursor",
      "the event list changed since this cursor was given: list again from the start (no cursor)",
    );
  return Number(m[1]);
}
