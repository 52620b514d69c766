/**
 * Who a caller is, as the `principal` string every route and tool receives, and what it may do
 * beyond `read`. The one place principals are named and parsed.
 *
 * - `token:stable`, `token:boot`: presented `daemon.authToken` or the per-boot token (from
 *   anywhere: holding it is the owner's power).
 * - `token:dashboard`: a dashboard session cookie (core/dashboard), given for a one-time login code
 *   that only the token holder can ask for: the same power, nothing more.
 * - `loopback`: SPEC.md's loopback exemption (a loopback socket, no proxy header).
 * - `anonymous`: a caller beyond loopback without a token, let in because `daemon.authToken` is
 *   unset. It may only read.
 * - `remote:tunnel`, `remote:sealed`: a request through the tunnel, plain or end-to-end sealed,
 *   without a token inside. They may only read (the relay's operator holds the caller token, so it
 *   could have made either).
 * - `remote:pairing:<id>:<scope>`: a request through pairing `<id>`'s encrypted link, with the scope
 *   the daemon's owner gave that pairing (`read` or `operate`).
 */
export type RemoteScope = "read" | "operate";

/** How far a principal reaches: the owner's `local` power, a pairing's `operate`, or `read`. */
export type Reach = "owner" | "operate" | "read";

export type RemoteVia =
  | { kind: "tunnel" }
  | { kind: "sealed" }
  | { kind: "pairing"; pairingId: string; scope: RemoteScope };

export function remotePrincipal(via: RemoteVia): string {
  return via.kind === "pairing" ? `remote:pairing:${via.pairingId}:${via.scope}` : `remote:${via.kind}`;
}

export function reachOf(principal: string): Reach {
  if (principal.startsWith("token:") || principal === "loopback") return "owner";
  if (/^remote:pairing:[^:]+:operate$/.test(principal)) return "operate";
  return "read";
}

/** The pairing a principal came through, if any. */
export function pairingOf(principal: string): string | undefined {
  return /^remote:pairing:([^:]+):/.exec(principal)?.[1];
}

/** Says who the caller is and how it could get more, for a refusal's message. */
export function describeCaller(principal: string): { who: string; more: string } {
  const pairing = pairingOf(principal);
  if (pairing) {
    return {
      who: `pairing ${pairing} (scope ${principal.endsWith(":operate") ? "operate" : "read"})`,
      more: `the daemon's owner can give it the operate scope with \`svc pair scope ${pairing} operate\``,
    };
  }
  if (principal === "remote:tunnel") {
    return {
      who: "a plain tunnel request",
      more: "plain tunnel requests never operate, since the relay's operator could forge them: use a pairing with the operate scope, or send daemon.authToken inside an end-to-end sealed request",
    };
  }
  if (principal === "remote:sealed") {
    return {
      who: "a sealed tunnel request without a token",
      more: "send daemon.authToken as Authorization inside the sealed request, or use a pairing with the operate scope",
    };
  }
  return {
    who: "a caller beyond loopback without a bearer token",
    more: "set daemon.authToken on the daemon and send it as Authorization: Bearer (without it, the network may only read)",
  };
}
