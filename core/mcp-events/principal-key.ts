/**
 * Whose subscription or poll lease a call addresses: the principal part of the sketch's
 * subscription key. The owner (a bearer token: the per-boot token or `daemon.authToken`, so a key
 * survives the per-boot token changing) is `owner`; a session presenting its session token is
 * `session:<id>`; a paired device is `pairing:<id>`. Webhook subscriptions need one of those
 * (the sketch's authenticated principal); a bare loopback caller, without a token or a session
 * token, may poll but not subscribe, as it may not create a webhook sentinel. It polls under a
 * key of its own, `loopback`, never `owner`: every process on the machine is a loopback caller, so
 * holding the owner's key would let any of them spend the owner's leases. Callers beyond loopback
 * without a token poll as `anonymous` or `remote:<via>`, each a key of its own too.
 */
import { hasToken } from "../daemon/authorization.js";
import { pairingOf } from "../daemon/principal.js";
import { forbidden } from "./rpc-errors.js";

export interface CallerIdentity {
  principal: string;
  sessionToken?: string;
}

/** The session holding a session token, or undefined when it names none (ended, unknown). */
export type SessionLookup = (token: string) => string | undefined;

const AUTHENTICATE =
  "send the daemon's bearer token (Authorization: Bearer: the per-boot token of runtime.json or daemon.authToken) " +
  "or the session token of the svc session it runs in (X-Svc-Session-Token)";

/** The key of a webhook subscriber; throws -32012 when the caller is not authenticated. */
export function subscriberKey(caller: CallerIdentity, sessionOf: SessionLookup, what: string): string {
  const key = keyOf(caller, sessionOf, what);
  if (key === "owner" || key.startsWith("session:") || key.startsWith("pairing:")) return key;
  throw forbidden(`${what} needs an authenticated caller (a webhook subscription sends to a URL): ${AUTHENTICATE}`);
}

/** The key of a poller (any caller that may read): a token-less caller's is never `owner`. */
export function pollerKey(caller: CallerIdentity, sessionOf: SessionLookup, what: string): string {
  return keyOf(caller, sessionOf, what);
}

function keyOf({ principal, sessionToken }: CallerIdentity, sessionOf: SessionLookup, what: string): string {
  const pairing = pairingOf(principal);
  if (pairing) return `pairing:${pairing}`;
  // A remote caller's session token is not honoured: sessions run here, and reach the daemon locally.
  if (principal.startsWith("remote:")) return principal;
  if (sessionToken !== undefined) {
    const session = sessionOf(sessionToken);
    if (!session)
      throw forbidden(
        `${what}: the session token presented (X-Svc-Session-Token) names no live session; it ends with its session`,
      );
    return `session:${session}`;
  }
  if (hasToken(principal)) return "owner";
  return principal;
}
