import { describe, expect, it } from "vitest";
import { checkHost, isLoopbackBind } from "../../../core/daemon/origin-guard.js";

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
