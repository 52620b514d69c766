/**
 * Spawn lineage. Every session the daemon starts gets a per-session token in its environment
 * (`SVC_SESSION_TOKEN`, beside `SVC_SESSION_ID`). A client running inside the session presents it
 * (the svc CLI sends it as the `X-Svc-Session-Token` header on every request; an MCP client sends
 * the same header to `/mcp`), and the daemon maps it back to the calling session: that is the
 * caller identity `spawn.attach` nests a child under. A token is a capability of the session that
 * holds it, never shown in a listing or a transcript, and forgotten when the session ends.
 */
import { createHash } from "node:crypto";
import { SvcError } from "../errors.js";
import { grantableDelegation } from "../config/spawn-defaults.js";
import type { EffectiveConfig } from "../config/config-service.js";

export const SESSION_TOKEN_ENV = "SVC_SESSION_TOKEN";
export const SESSION_TOKEN_HEADER = "x-svc-session-token";

/** The session token a request presents (`X-Svc-Session-Token`; the first, if sent twice). */
export function presentedSessionToken(headers: Record<string, string | string[] | undefined>): string | undefined {
  const v = headers[SESSION_TOKEN_HEADER];
  return Array.isArray(v) ? v[0] : v;
}

const digest = (token: string) => createHash("sha256").update(token).digest("hex");

export class SessionTokens {
  private readonly byDigest = new Map<string, string>();
  private readonly bySession = new Map<string, string[]>();

  issue(sessionId: string, randomHex: string): string {
    const token = `svcst_${randomHex}`;
    this.byDigest.set(digest(token), sessionId);
    this.bySession.set(sessionId, [...(this.bySession.get(sessionId) ?? []), digest(token)]);
    return token;
  }

  /** The session that holds `token`, or undefined (an unknown or revoked token names nobody). */
  sessionOf(token: string | undefined): string | undefined {
    return token ? this.byDigest.get(digest(token)) : undefined;
  }

  revoke(sessionId: string): void {
    for (const d of this.bySession.get(sessionId) ?? []) this.byDigest.delete(d);
    this.bySession.delete(sessionId);
  }
}

/** Whether a spawn is nested under `caller` (SPEC.md spawn.attach). An explicit parent always is. */
export function attachTo(
  policy: "always" | "on-request",
  caller: string | undefined,
  req: { attach?: boolean; parentId?: string },
): string | undefined {
  if (req.attach === false) return undefined;
  if (req.parentId) return req.parentId;
  if (!caller) return undefined;
  return policy === "always" || req.attach === true ? caller : undefined;
}

/** A session that grants delegation: the new session's parent, or the session that made the call. */
export interface Grantor {
  id: string;
  delegation?: number;
}

/**
 * The delegation a new session gets: how many further levels of sessions it may spawn. Its
 * grantors are its parent and the calling session (they differ under `attach: false` or an
 * explicit `parentId`, and both bound it). A session no session made has what it asks for (unset =
 * no limit). Otherwise it gets what is asked (default: one less than its tightest grantor), never
 * more than one less than any grantor, capped by `defaults.maxGrantableDelegation`. A grantor with
 * delegation 0 may not spawn at all.
 */
export function childDelegation(
  cfg: EffectiveConfig,
  grantors: ReadonlyArray<Grantor | undefined>,
  requested: number | undefined,
): { delegation?: number; capped?: string } {
  const by = [...new Map(grantors.filter((g): g is Grantor => g !== undefined).map((g) => [g.id, g])).values()];
  if (by.length === 0) return requested === undefined ? {} : { delegation: requested };
  const spent = by.find((g) => g.delegation === 0);
  if (spent) {
    throw new SvcError(
      "forbidden",
      `session ${spent.id} may not spawn sessions: its delegation is 0 (granted by its own parent under defaults.maxGrantableDelegation)`,
    );
  }
  const left = Math.min(...by.map((g) => (g.delegation === undefined ? Infinity : g.delegation - 1)));
  const want = Math.min(requested ?? left, left);
  const granted = want === Infinity ? grantCap(cfg) : grantableDelegation(cfg, want);
  const names = by.map((g) => g.id).join(", ");
  const capped =
    requested !== undefined && (granted ?? Infinity) < requested
      ? `delegation ${requested} capped to ${granted} (granted by ${names}${cfg.defaults.maxGrantableDelegation !== undefined ? `, defaults.maxGrantableDelegation ${cfg.defaults.maxGrantableDelegation}` : ""})`
      : undefined;
  return { ...(granted !== undefined ? { delegation: granted } : {}), ...(capped ? { capped } : {}) };
}

function grantCap(cfg: EffectiveConfig): number | undefined {
  return cfg.defaults.maxGrantableDelegation;
}
