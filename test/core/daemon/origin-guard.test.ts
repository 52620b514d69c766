import { describe, expect, it } from "vitest";
import { checkHost, checkOrigin, isLoopbackBind, isSameOrigin } from "../../../core/daemon/origin-guard.js";

describe("checkHost (DNS rebinding)", () => {
  it.each(["127.0.0.1", "127.0.0.2", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"])(
    "a daemon bound to loopback %s refuses a foreign Host",
    (bind) => {
      expect(isLoopbackBind(bind)).toBe(true);
      expect(() => checkHost({ host: "evil.example:18790" }, bind)).toThrow(/Host "evil\.example" is not this daemon/);
    },
  );

  it.each(["localhost:18790", "127.0.0.1:1", "127.0.0.2", "[::1]:18790"])("a loopback Host %s is accepted", (host) => {
    expect(() => checkHost({ host }, "127.0.0.2")).not.toThrow();
  });

  it.each(["0.0.0.0", "192.168.1.10", "::"])("a daemon bound to routable %s answers to any Host", (bind) => {
    expect(isLoopbackBind(bind)).toBe(false);
    expect(() => checkHost({ host: "svc.lan:18790" }, bind)).not.toThrow();
  });

  it("a request without Host passes", () => {
    expect(() => checkHost({}, "127.0.0.1")).not.toThrow();
  });
});

describe("isSameOrigin (the daemon's own origin)", () => {
  it.each([
    ["localhost:18790", "http://localhost:18790"],
    ["LocalHost:18790", "http://localhost:18790"],
    ["127.0.0.1:18790", "http://127.0.0.1:18790"],
    ["[::1]:18790", "http://[::1]:18790"],
    ["192.0.2.10:18790", "http://192.0.2.10:18790"],
    ["[2001:db8::1]:18790", "http://[2001:db8::1]:18790"],
    ["127.0.0.1", "http://127.0.0.1:80"],
  ])("Host %s with Origin %s is the daemon's own", (host, origin) => {
    expect(isSameOrigin(origin, { host })).toBe(true);
    expect(() => checkOrigin("POST", { host, origin }, { allowedOrigins: [] })).not.toThrow();
  });

  it.each([
    ["a DNS name, which may have been rebound", "svc.lan:18790", "http://svc.lan:18790"],
    ["another port", "127.0.0.1:18790", "http://127.0.0.1:18791"],
    ["another scheme", "127.0.0.1:18790", "https://127.0.0.1:18790"],
    ["another host", "127.0.0.1:18790", "http://localhost:18790"],
    ["an opaque origin", "127.0.0.1:18790", "null"],
    ["no Host", undefined, "http://127.0.0.1:18790"],
    ["a Host that is not an authority", '127.0.0.1:18790"x', 'http://127.0.0.1:18790"x'],
  ])("%s is not", (_why, host, origin) => {
    expect(isSameOrigin(origin, host === undefined ? {} : { host })).toBe(false);
    expect(() =>
      checkOrigin("POST", { ...(host === undefined ? {} : { host }), origin }, { allowedOrigins: [] }),
    ).toThrow(/not this daemon's own origin/);
  });

  it("a DNS name is let in by daemon.allowedOrigins", () => {
    expect(() =>
      checkOrigin(
        "POST",
        { host: "svc.lan:18790", origin: "http://svc.lan:18790" },
        { allowedOrigins: ["http://svc.lan:18790"] },
      ),
    ).not.toThrow();
  });
});
