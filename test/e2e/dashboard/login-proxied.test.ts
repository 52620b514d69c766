/**
 * Issue 42, finding 5: `POST /ui/login` refuses a proxied caller (as the cookie check does) before
 * it spends the one-time code, so the code still logs the browser on this machine in. A real
 * daemon, real HTTP.
 */
import { describe, expect, it } from "vitest";
import { useDaemonProcess } from "../../support/cli.js";

describe("the dashboard login refuses proxied callers without spending the code", () => {
  const fx = useDaemonProcess({ prefix: "svc-e2e-login-proxied-" });

  const newCode = async () => {
    const res = await fx.daemon.fetch("/dashboard/login-codes", { method: "POST" });
    expect(res.status).toBe(201);
    return ((await res.json()) as { code: string }).code;
  };
  const login = (code: string, headers: Record<string, string> = {}) =>
    fetch(`${fx.daemon.baseUrl}/ui/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: fx.daemon.baseUrl, ...headers },
      body: JSON.stringify({ code }),
    });

  it.each([
    ["X-Forwarded-For", { "x-forwarded-for": "203.0.113.7" }],
    ["Forwarded", { forwarded: "for=203.0.113.7" }],
    ["X-Real-IP", { "x-real-ip": "203.0.113.7" }],
  ])("a login with %s is refused 403 with the reason, and the code then works unproxied", async (_h, proxy) => {
    const code = await newCode();
    const refused = await login(code, proxy);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("set-cookie")).toBeNull();
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("forbidden");
    expect(body.error.message).toMatch(/through a proxy .*X-Forwarded-For.*the login code was not spent/);
    expect(body.error.message).not.toContain(code);

    const ok = await login(code);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("set-cookie")).toMatch(new RegExp(`^svc_dashboard_${fx.daemon.port}=[\\w-]+; HttpOnly`));
    // Spent now: once.
    expect((await login(code)).status).toBe(401);
  });
});
