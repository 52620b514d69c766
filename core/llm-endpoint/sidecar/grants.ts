/**
 * The session tokens the daemon has granted, and the sessions it has blocked. A client presents
 * its token as `x-api-key`, `authorization: Bearer`, `x-goog-api-key` or (Gemini) a `?key=` query
 * parameter (the SDKs send one of them).
 */
import type { IncomingHttpHeaders } from "node:http";

export interface Grant {
  sessionId: string;
  runId?: string;
}

export class Grants {
  private readonly byToken = new Map<string, Grant>();
  private readonly blocked = new Map<string, string>();

  grant(token: string, g: Grant): void {
    this.byToken.set(token, g);
  }

  /** Forgets the token; returns its session when no other token of that session is left. */
  revoke(token: string): string | undefined {
    const g = this.byToken.get(token);
    if (!g) return undefined;
    this.byToken.delete(token);
    for (const other of this.byToken.values()) if (other.sessionId === g.sessionId) return undefined;
    this.blocked.delete(g.sessionId);
    return g.sessionId;
  }

  block(sessionId: string, reason: string): void {
    this.blocked.set(sessionId, reason);
  }

  blockedReason(sessionId: string): string | undefined {
    return this.blocked.get(sessionId);
  }

  /** The grant of the request's token, whichever header (or `queryKey`, Gemini's `?key=`) carries it. */
  identify(headers: IncomingHttpHeaders, queryKey?: string): Grant | undefined {
    for (const key of [headers["x-api-key"], headers["x-goog-api-key"], queryKey]) {
      const g = typeof key === "string" ? this.byToken.get(key) : undefined;
      if (g) return g;
    }
    const auth = headers.authorization;
    if (typeof auth === "string" && auth.length > 7 && auth.slice(0, 7).toLowerCase() === "bearer ")
      return this.byToken.get(auth.slice(7).trim());
    return undefined;
  }
}
