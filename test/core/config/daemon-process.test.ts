import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempHome, runCli, useDaemonProcess } from "../../support/cli.js";

async function until(probe: () => boolean, what: string, logs: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a running daemon (svc serve) and a config.json that turns bad", () => {
  const fx = useDaemonProcess({ config: { acpAgents: { broken: { name: "no bin" } } } });

  it("warns at boot about a dropped acpAgents entry and still starts", async () => {
    expect(fx.daemon.logs()).toMatch(/acpAgents\.broken dropped/);
    expect((await fx.daemon.fetch("/health")).status).toBe(200);
  });

  it("keeps its last good configuration, says so, and keeps serving", async () => {
    await writeFile(join(fx.home, "config.json"), "{ this is not json");
    await until(() => fx.daemon.logs().includes("keeps its last good configuration"), "the warning", fx.daemon.logs);
    expect(fx.daemon.logs()).toMatch(/config\.json is not valid JSON/);
    expect((await fx.daemon.fetch("/health")).status).toBe(200);
    await writeFile(join(fx.home, "config.json"), JSON.stringify({ sessions: { attentionDelaySec: 5 } }));
    await until(() => fx.daemon.logs().includes("config.json reloaded"), "the reload", fx.daemon.logs);
  });
});

describe("svc serve refuses a configuration it cannot resolve", () => {
  it.each([
    [["--profile", "nope"], {}, /--profile nope: no such profile/],
    [[], { SVC_TURN_STALL_AFTER_MS: "five minutes" }, /SVC_TURN_STALL_AFTER_MS="five minutes" is invalid/],
  ])("serve %j with env %j fails naming the cause", async (args, env, why) => {
    const home = await makeTempHome();
    try {
      const r = await runCli(["serve", "--port", "0", ...args], { home: home.home, env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(why);
    } finally {
      await home.cleanup();
    }
  });
});

describe("svc serve checks its flags against the schema", () => {
  it.each([
    [["--bind", ""], /--bind "" is invalid: must not be empty \(it sets daemon\.bind\)/],
    [["--auth-token", ""], /--auth-token \(value hidden\) is invalid: must not be empty/],
    [["--port", "70000"], /--port 70000 is invalid: must be 0\.\.65535, got 70000 \(it sets daemon\.port\)/],
    [["--port", ""], /--port "" is not a port number; give a whole number from 1 to 65535/],
    [["--port", "1.5"], /--port "1\.5" is not a port number/],
    [["--port", "abc"], /--port "abc" is not a port number/],
  ])("serve %j is a usage error naming the flag", async (args, why) => {
    const home = await makeTempHome();
    try {
      const r = await runCli(["serve", ...(args.includes("--port") ? [] : ["--port", "0"]), ...args], {
        home: home.home,
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
    } finally {
      await home.cleanup();
    }
  });
});
