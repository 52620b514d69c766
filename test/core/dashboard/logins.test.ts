import { describe, expect, it } from "vitest";
import { dashboardPrincipal } from "../../../core/dashboard/cookie-auth.js";
import { cookieName, cookieOf, DashboardLogins } from "../../../core/dashboard/logins.js";

describe("dashboard logins", () => {
  it("a login code is spent once, and only within its time", () => {
    let now = 1_000;
    const logins = new DashboardLogins({ codeTtlMs: 60_000, now: () => now });
    const { code, expiresAt } = logins.issueCode();
    expect(expiresAt).toBe(61_000);
    expect(code).toMatch(/^[\w-]{32}$/);
    const session = logins.redeem(code);
    expect(session).toMatch(/^[\w-]{43}$/);
    expect(logins.redeem(code)).toBeUndefined();
    const late = logins.issueCode().code;
    now += 60_000;
    expect(logins.redeem(late)).toBeUndefined();
    expect(logins.redeem("")).toBeUndefined();
  });

  it("a session ends after the idle time without a request, and each request restarts it", () => {
    let now = 0;
    const logins = new DashboardLogins({ idleMs: 1_000, now: () => now });
    const id = logins.redeem(logins.issueCode().code)!;
    now = 900;
    expect(logins.touch(id)).toBe(true);
    now = 1_800;
    expect(logins.touch(id)).toBe(true);
    now = 2_800;
    expect(logins.touch(id)).toBe(false);
    expect(logins.touch("made-up")).toBe(false);
  });

  it("the cookie counts for a state change only from the daemon's own origin", () => {
    const logins = new DashboardLogins();
    const id = logins.redeem(logins.issueCode().code)!;
    const cookie = `other=1; ${cookieName(7878)}=${id}`;
    const host = "127.0.0.1:7878";
    expect(cookieOf({ cookie }, cookieName(7878))).toBe(id);
    expect(dashboardPrincipal(logins, 7878, "GET", { cookie, host })).toBe("token:dashboard");
    expect(dashboardPrincipal(logins, 7878, "POST", { cookie, host, origin: "http://127.0.0.1:7878" })).toBe(
      "token:dashboard",
    );
    expect(dashboardPrincipal(logins, 7878, "POST", { cookie, host })).toBeUndefined();
    expect(dashboardPrincipal(logins, 7878, "POST", { cookie, host, origin: "http://evil.example" })).toBeUndefined();
    // Another daemon's port: another cookie name.
    expect(dashboardPrincipal(logins, 7879, "GET", { cookie, host: "127.0.0.1:7879" })).toBeUndefined();
  });
});

describe("a dashboard cookie in the daemon's authentication", () => {
  const tokens = { boot: "b".repeat(43), forward: "f".repeat(43) };
  it("stands for the token holder on loopback, and for nobody through a proxy or from the network", async () => {
    const { authenticate } = await import("../../../core/daemon/auth.js");
    const local = { headers: {}, remoteAddress: "127.0.0.1" };
    expect(authenticate("token", local, tokens, "token:dashboard")).toBe("token:dashboard");
    const proxied = { headers: { "x-forwarded-for": "203.0.113.9" }, remoteAddress: "127.0.0.1" };
    expect(() => authenticate("token", proxied, tokens, "token:dashboard")).toThrow(/bearer token is required/);
    const network = { headers: {}, remoteAddress: "192.0.2.7" };
    expect(() => authenticate("token", network, tokens, "token:dashboard")).toThrow(/bearer token is required/);
  });
});
