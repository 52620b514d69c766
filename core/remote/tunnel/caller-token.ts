/**
 * The tunnel's two credentials. The **host token** (the relay's `--tunnel-token-file` or
 * `SVC_RELAY_TUNNEL_TOKENS`, the daemon's `tunnel.token` or credentials.json `tunnel/token`) is the
 * daemon's own: only it opens `/v1/tunnel`. Callers present the **caller token**, derived from it
 * one way (HKDF-SHA-256), so the relay and the daemon's owner both compute it with no new
 * configuration, and holding it tells nothing of the host token.
 */
import { hkdfSync } from "node:crypto";

const INFO = "svc-tunnel-caller/1";

/** The caller token of a tunnel: base64url of 32 bytes of HKDF-SHA-256(host token, no salt, "svc-tunnel-caller/1"). */
export function callerTokenFor(hostToken: string): string {
  return Buffer.from(hkdfSync("sha256", Buffer.from(hostToken, "utf8"), Buffer.alloc(0), INFO, 32)).toString(
    "base64url",
  );
}
