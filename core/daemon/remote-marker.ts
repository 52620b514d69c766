/**
 * How a request the daemon forwards to its own listener (a pairing's link, the tunnel: see
 * core/remote/loopback-forward.ts) says which remote caller it carries: the `X-Svc-Remote` header,
 * `<forward key> <via>`. The key is per boot and never leaves the process, so only the daemon can
 * set it; a header with any other key is ignored (the request is then an ordinary network caller).
 */
import type { IncomingHttpHeaders } from "node:http";
import { secretEquals } from "./secret-equals.js";
import type { RemoteVia } from "./principal.js";

export const REMOTE_MARKER = "x-svc-remote";

export function remoteMarker(key: string, via: RemoteVia): string {
  return `${key} ${via.kind === "pairing" ? `pairing ${via.pairingId} ${via.scope}` : via.kind}`;
}

/** The remote caller a request carries, when its marker holds this boot's key. */
export function readRemoteMarker(headers: IncomingHttpHeaders, key: string | undefined): RemoteVia | undefined {
  const h = headers[REMOTE_MARKER];
  if (!key || typeof h !== "string") return undefined;
  const [k, kind, id, scope, ...rest] = h.split(" ");
  if (!k || !secretEquals(k, key) || rest.length) return undefined;
  if ((kind === "tunnel" || kind === "sealed") && id === undefined) return { kind };
  if (kind === "pairing" && id && /^[A-Za-z0-9_-]+$/.test(id) && (scope === "read" || scope === "operate"))
    return { kind, pairingId: id, scope };
  return undefined;
}
