import { describe, expect, it } from "vitest";
import { useDaemonProcess } from "../../support/cli.js";
import { makeSandbox } from "./sandbox.js";

describe("the daemon loads plugins at start", () => {
  const fx = useDaemonProcess({
    makeHome: makeSandbox,
    setup: async (sb) => {
      await sb.place("install", "svc-fixture-provider");
      await sb.place("install", "svc-fixture-wrong-shape");
      await sb.writeConfig({ adapters: ["svc-fixture-provider", "svc-fixture-wrong-shape", "svc-fixture-missing"] });
      return { env: { SVC_INSTALL_DIR: sb.install } };
    },
  });

  it("keeps serving with broken packages, logging one warning per failed package naming it and the cause", async () => {
    expect((await fx.daemon.fetch("/health")).status).toBe(200);
    const lines = fx.daemon
      .logs()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { level: string; msg: string; package?: string; phase?: string });
    const warns = lines.filter((l) => l.level === "warn" && l.package?.startsWith("svc-fixture-"));
    expect(warns.map((w) => [w.package, w.phase])).toEqual([
      ["svc-fixture-wrong-shape", "shape"],
      ["svc-fixture-missing", "resolve"],
    ]);
    expect(warns[0]!.msg).toContain(
      "adapter package svc-fixture-wrong-shape not loaded (shape): ./index.js: default export has no setup(ctx) function",
    );
    expect(lines.some((l) => l.msg === "plugins loaded")).toBe(true);
  });
});
