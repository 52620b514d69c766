import { describe, expect, it } from "vitest";
import { networkInterfaces } from "node:os";
import { hasLoopbackHost, type HostPolicy, isLoopbackBind } from "../../../core/daemon/host-names.js";
import { checkHost, checkOrigin, isSameOrigin } from "../../../core/daemon/origin-guard.js";

/** A machine with one LAN address besides loopback, as `os.networkInterfaces()` would list it. */
const machine = (bind: string, allowedHosts: string[] = []): HostPolicy => ({
  bind,
  allowedHosts,
  localAddresses: () => ["127.0.0.1", "::1", "192.168.1.10", "fe80::1c2:3ff:fe04:506"],
});

describe("checkHost (DNS rebinding): one rule for every bind", () => {
  it.each(["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST", "0.0.0.0", "::", "192.168.1.10"])(
    "a daemon bound to %s refuses a foreign Host (on a wide bind this was let through)",
    (bind) => {
      expect(() => checkHost({ host: "evil.example:18790" }, machine(bind))).toThrow(
        /Host "evil\.example" does not name this daemon .*daemon\.allowedHosts/,
      );
    },
  );

  it.each([
    "localhost:18790",
    "127.0.0.1:1",
    "127.0.0.2",
    "[::1]:18790",
    "[0:0:0:0:0:0:0:1]:18790",
    "[::ffff:127.0.0.1]:18790",
  ])("a loopback Host %s is accepted on every bind", (host) => {
    for (const bind of ["127.0.0.2", "0.0.0.0", "::"]) expect(() => checkHost({ host }, machine(bind))).not.toThrow();
  });

  it.each(["192.168.1.10:18790", "192.168.1.10", "[fe80::1c2:3ff:fe04:506]:18790", "[FE80:0::1C2:3FF:FE04:506]"])(
    "an address of this machine %s is accepted (an IP literal goes through no DNS)",
    (host) => {
      expect(() => checkHost({ host }, machine("0.0.0.0"))).not.toThrow();
    },
  );

  it.each(["192.168.1.11:18790", "[2001:db8::1]:18790", "0.0.0.0:18790", "[::]:18790"])(
    "an address that is not this machine's, %s, is refused (a wildcard bind names no address)",
    (host) => {
      expect(() => checkHost({ host }, machine("0.0.0.0"))).toThrow(/does not name this daemon/);
      expect(() => checkHost({ host }, machine("::"))).toThrow(/does not name this daemon/);
    },
  );

  it("the bind address is accepted, as an IP literal or as the name it was given", () => {
    expect(() => checkHost({ host: "203.0.113.5:18790" }, machine("203.0.113.5"))).not.toThrow();
    expect(() => checkHost({ host: "[2001:db8::5]:18790" }, machine("2001:db8::5"))).not.toThrow();
    expect(() => checkHost({ host: "SVC-Box.lan:18790" }, machine("svc-box.lan"))).not.toThrow();
  });

  it("a name in daemon.allowedHosts passes; nothing else does", () => {
    const policy = machine("0.0.0.0", ["svc.lan", "Box.Example", "[2001:db8::7]"]);
    for (const host of ["svc.lan:18790", "SVC.LAN", "box.example:1", "[2001:db8::7]:18790"])
      expect(() => checkHost({ host }, policy)).not.toThrow();
    for (const host of ["evil.svc.lan:18790", "svc.lan.evil.example", "example"])
      expect(() => checkHost({ host }, policy)).toThrow(/does not name this daemon/);
  });

  it("a Host that is not an authority is refused, and shown cut", () => {
    expect(() => checkHost({ host: `bad host${"x".repeat(300)}` }, machine("0.0.0.0"))).toThrow(
      /Host "bad hostx{92}" does not name/,
    );
  });

  it("a request without Host (HTTP/1.0) passes", () => {
    expect(() => checkHost({}, machine("127.0.0.1"))).not.toThrow();
    expect(() => checkHost({}, machine("0.0.0.0"))).not.toThrow();
  });

  it("without an injected list it asks the machine's interfaces", () => {
    const lan = Object.values(networkInterfaces())
      .flatMap((l) => l ?? [])
      .find((i) => !i.internal);
    const policy: HostPolicy = { bind: "0.0.0.0", allowedHosts: [] };
    if (lan) {
      const host = lan.family === "IPv6" ? `[${lan.address}]:18790` : `${lan.address}:18790`;
      expect(() => checkHost({ host }, policy)).not.toThrow();
    }
    expect(() => checkHost({ host: "192.0.2.254:18790" }, policy)).toThrow(/does not name this daemon/);
  });
});

describe("isLoopbackBind, hasLoopbackHost", () => {
  it.each(["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"])("%s is a loopback bind", (b) => {
    expect(isLoopbackBind(b)).toBe(true);
  });
  it.each(["0.0.0.0", "192.168.1.10", "::", "svc.lan"])("%s is not", (b) => {
    expect(isLoopbackBind(b)).toBe(false);
  });
  it("only a loopback Host (or none) can have the loopback exemption", () => {
    for (const host of ["localhost:1", "127.0.0.1:18790", "[::1]:18790", "LocalHost"])
      expect(hasLoopbackHost({ host })).toBe(true);
    expect(hasLoopbackHost({})).toBe(true);
    for (const host of ["evil.example:18790", "192.168.1.10:18790", "bad host", "localhost.:1"])
      expect(hasLoopbackHost({ host })).toBe(false);
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
