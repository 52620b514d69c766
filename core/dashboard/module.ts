/**
 * The dashboard room in the daemon: the one-time login codes `svc open` asks for, the login that
 * turns a code into a session cookie, the page itself under `/ui/` (served by page-files.ts,
 * imported on the first request), and the read routes its views need beyond the other rooms'.
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { isLoopbackCaller } from "../daemon/auth.js";
import { isSameOrigin } from "../daemon/origin-guard.js";
import { SvcError } from "../errors.js";
import type { RouteDef, RouteRequest } from "../plugin-api/http.js";
import { adaptersRoute } from "../plugin-host/adapters-route.js";
import { registerValue } from "../runtime/inject.js";
import { SESSIONS } from "../sessions/runtime.js";
import { CONFIG, HOME, LISTEN, PLUGINS, ROUTES, resolve } from "../tokens.js";
import { worktreesRoute } from "../workspaces/worktrees-route.js";
import { cookieName, cookieOf, DASHBOARD_LOGINS, DASHBOARD_PRINCIPAL, DashboardLogins } from "./logins.js";

const AGAIN = "run `svc open` again for a new login link";

const pageFiles = () => import("./page-files.js");

export function dashboardRoutes(logins: DashboardLogins, port: () => number): RouteDef[] {
  const name = () => cookieName(port());
  const session = (req: RouteRequest) => {
    const id = cookieOf(req.headers, name());
    return id !== undefined && req.principal === DASHBOARD_PRINCIPAL ? id : undefined;
  };
  return [
    {
      method: "POST",
      path: "/dashboard/login-codes",
      auth: "token",
      maxBodyBytes: 1_024,
      handler: () => {
        const { code, expiresAt } = logins.issueCode();
        return {
          status: 201,
          headers: { "cache-control": "no-store" },
          body: { code, expiresAt, path: `/ui/#login=${code}` },
        };
      },
    },
    {
      method: "POST",
      path: "/ui/login",
      auth: "open",
      maxBodyBytes: 1_024,
      handler: (req) => {
        const origin = req.headers.origin;
        if (origin === undefined || !isSameOrigin(origin, req.headers))
          throw new SvcError("forbidden", "a dashboard login must come from the dashboard page (this daemon's origin)");
        // The cookie counts for loopback callers only (auth.ts): refuse the others before the code is spent.
        if (!isLoopbackCaller(req))
          throw new SvcError(
            "forbidden",
            "a dashboard login must come from this machine without a proxy: this request came through a proxy " +
              "(a Forwarded, X-Forwarded-For or X-Real-IP header), the tunnel or the network, where a session cookie " +
              "does not count; the login code was not spent: open the link in a browser on this machine " +
              "(http://127.0.0.1:<port>/ui/), or send the bearer token instead",
          );
        const code = (req.json() as { code?: unknown } | null)?.code;
        if (typeof code !== "string" || code === "")
          throw new SvcError("invalid_input", 'the login body must be {"code": "<the code from svc open>"}');
        const id = logins.redeem(code);
        if (id === undefined)
          throw new SvcError("unauthorized", `this login link was already used or has expired; ${AGAIN}`);
        const maxAge = Math.floor(logins.idleMs / 1000);
        return {
          status: 200,
          headers: {
            "set-cookie": `${name()}=${id}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}`,
            "cache-control": "no-store",
          },
          body: { scope: "owner" },
        };
      },
    },
    {
      method: "POST",
      path: "/ui/logout",
      auth: "open",
      handler: (req) => {
        const id = session(req);
        if (id === undefined) throw new SvcError("unauthorized", `no dashboard session; ${AGAIN}`);
        logins.end(id);
        return {
          status: 200,
          headers: { "set-cookie": `${name()}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0` },
          body: { ended: true },
        };
      },
    },
    {
      method: "GET",
      path: "/ui/session",
      auth: "open",
      handler: (req) => {
        if (session(req) === undefined)
          throw new SvcError(
            "unauthorized",
            `no dashboard session (none yet, expired, or the daemon restarted); ${AGAIN}`,
          );
        return { status: 200, headers: { "cache-control": "no-store" }, body: { scope: "owner" } };
      },
    },
    { method: "GET", path: "/ui", auth: "open", handler: async (req) => (await pageFiles()).servePage(req.path) },
    { method: "GET", path: "/ui/*", auth: "open", handler: async (req) => (await pageFiles()).servePage(req.path) },
    { method: "GET", path: "/favicon.ico", auth: "open", handler: async () => (await pageFiles()).favicon() },
  ];
}

export const dashboardModule: DaemonModule = {
  name: "dashboard",
  async start(c: DependencyContainer) {
    const logins = new DashboardLogins();
    registerValue(c, DASHBOARD_LOGINS, logins);
    const routes = resolve(c, ROUTES);
    for (const r of dashboardRoutes(logins, () => resolve(c, LISTEN).port)) routes.add(r);
    routes.add(worktreesRoute(resolve(c, HOME), resolve(c, CONFIG), resolve(c, SESSIONS)));
    routes.add(adaptersRoute(resolve(c, PLUGINS)));
  },
};
