/**
 * The dashboard's logins, in memory only: one-time login codes (`svc open` asks for one with the
 * owner's bearer token) and the cookie sessions they are exchanged for. Nothing is written to
 * disk: a daemon restart ends every session (run `svc open` again).
 *
 * A session cookie is the owner's power, as the bearer token is (principal `token:dashboard`);
 * a state-changing request carries it only from the daemon's own origin (CSRF: see auth.ts).
 */
import { randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { secretEquals } from "../daemon/secret-equals.js";
import { token } from "../tokens.js";

export const DASHBOARD_LOGINS = token<DashboardLogins>("dashboard-logins");

/** The principal a dashboard session cookie stands for: the token holder, nothing more. */
export const DASHBOARD_PRINCIPAL = "token:dashboard";

export interface DashboardLoginOptions {
  /** How long a login code stays good; default 60 s. */
  codeTtlMs?: number;
  /** A session ends after this long without a request; default 12 h. */
  idleMs?: number;
  now?: () => number;
}

const MAX_CODES = 32;
const MAX_SESSIONS = 256;

export class DashboardLogins {
  private readonly codes = new Map<string, number>();
  private readonly sessions = new Map<string, number>();
  readonly codeTtlMs: number;
  readonly idleMs: number;
  private readonly now: () => number;

  constructor(o: DashboardLoginOptions = {}) {
    this.codeTtlMs = o.codeTtlMs ?? 60_000;
    this.idleMs = o.idleMs ?? 12 * 3600_000;
    this.now = o.now ?? Date.now;
  }

  /** A new one-time code, good for `codeTtlMs`. */
  issueCode(): { code: string; expiresAt: number } {
    this.sweep();
    const code = randomBytes(24).toString("base64url");
    const expiresAt = this.now() + this.codeTtlMs;
    this.codes.set(code, expiresAt);
    while (this.codes.size > MAX_CODES) this.codes.delete(this.codes.keys().next().value!);
    return { code, expiresAt };
  }

  /** Spends `code` (once) for a new session id; undefined when it is unknown, used or expired. */
  redeem(code: string): string | undefined {
    this.sweep();
    let found: string | undefined;
    for (const c of this.codes.keys()) if (secretEquals(c, code)) found = c;
    if (found === undefined) return undefined;
    this.codes.delete(found);
    const id = randomBytes(32).toString("base64url");
    this.sessions.set(id, this.now());
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    return id;
  }

  /** Whether `id` is a live session; a hit counts as activity (idle expiry restarts). */
  touch(id: string): boolean {
    const last = this.sessions.get(id);
    if (last === undefined) return false;
    if (this.now() - last >= this.idleMs) {
      this.sessions.delete(id);
      return false;
    }
    this.sessions.set(id, this.now());
    return true;
  }

  end(id: string): void {
    this.sessions.delete(id);
  }

  private sweep(): void {
    const now = this.now();
    for (const [c, exp] of this.codes) if (exp <= now) this.codes.delete(c);
    for (const [id, last] of this.sessions) if (now - last >= this.idleMs) this.sessions.delete(id);
  }
}

/** The session cookie's name: per port, since browsers share cookies between the ports of a host. */
export function cookieName(port: number): string {
  return `svc_dashboard_${port}`;
}

/** The value of cookie `name` in the request, if any. */
export function cookieOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const raw = headers.cookie;
  if (!raw) return undefined;
  for (const part of raw.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
