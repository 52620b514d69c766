/**
 * Who a request with a dashboard session cookie is: the owner (`token:dashboard`), when the
 * cookie names a live session. A state-changing request counts its cookie only when it comes
 * from the daemon's own origin (its `Origin` header present and equal to `http://<Host>`): a
 * page elsewhere cannot act with the owner's cookie (CSRF), whatever the browser's SameSite rules.
 */
import type { IncomingHttpHeaders } from "node:http";
import { isSameOrigin } from "../daemon/origin-guard.js";
import { cookieName, cookieOf, DASHBOARD_PRINCIPAL, type DashboardLogins } from "./logins.js";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

export function dashboardPrincipal(
  logins: DashboardLogins,
  port: number,
  method: string,
  headers: IncomingHttpHeaders,
): string | undefined {
  const id = cookieOf(headers, cookieName(port));
  if (id === undefined) return undefined;
  if (!SAFE.has(method)) {
    const origin = headers.origin;
    if (origin === undefined || !isSameOrigin(origin, headers)) return undefined;
  }
  return logins.touch(id) ? DASHBOARD_PRINCIPAL : undefined;
}
