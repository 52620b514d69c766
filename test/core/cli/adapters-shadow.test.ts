/** Issue 13: replacing a built-in is named as such, and a verb that needs it names the package that replaced it. */
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../../support/cli.js";
import { makeSandbox } from "../plugin-host/sandbox.js";

describe("a package that replaces the built-in agentpush provider", () => {
  const fx = useDaemonProcess({
    makeHome: makeSandbox,
    setup: async (sb) => {
      await sb.place("install", "svc-fixture-agentpush-shadow");
      await sb.writeConfig({ adapters: ["svc-fixture-agentpush-shadow"] });
      return { env: { SVC_INSTALL_DIR: sb.install } };
    },
  });
  const cli = (args: string[]) => runCli(args, { home: fx.home, env: { SVC_INSTALL_DIR: fx.sandbox.install } });

  it("svc adapters ls says it replaces the built-in provider agentpush", async () => {
    const r = await cli(["adapters", "ls"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/provider +agentpush +wins \(replaces built-in provider agentpush\)/);
  });

  it("svc sentinel push names the package that replaced the built-in and the fix", async () => {
    const r = await cli(["sentinel", "push", "ci:x", "--type", "t"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /package svc-fixture-agentpush-shadow replaces it .*svc adapters rm svc-fixture-agentpush-shadow/,
    );
  });

  it("REST: the route the built-in served names the package that replaced it, not a bare no route", async () => {
    const res = await fx.daemon.fetch("/providers/agentpush/events", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, body.error.code]).toEqual([404, "not_found"]);
    expect(body.error.message).toMatch(
      /^no route POST \/providers\/agentpush\/events: the built-in provider agentpush serves it, but package svc-fixture-agentpush-shadow replaces it .*svc adapters rm svc-fixture-agentpush-shadow/,
    );
  });
});
