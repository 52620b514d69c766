import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../../support/cli.js";

async function until(probe: () => boolean, what: string, logs: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("a running daemon (svc serve) and a config.json that turns bad", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    home = await makeTempHome();
    await writeFile(join(home.home, "config.json"), JSON.stringify({ acpAgents: { broken: { name: "no bin" } } }));
    daemon = await startDaemonProcess({ home: home.home });
  });
  afterAll(async () => {
    await daemon?.stop();
    await home?.cleanup();
  });

  it("warns at boot about a dropped acpAgents entry and still starts", async () => {
    expect(daemon.logs()).toMatch(/acpAgents\.broken dropped/);
    expect((await daemon.fetch("/health")).status).toBe(200);
  });

  it("keeps its last good configuration, says so, and keeps serving", async () => {
    await writeFile(join(home.home, "config.json"), "{ this is not json");
    await until(() => daemon.logs().includes("keeps its last good configuration"), "the warning", daemon.logs);
    expect(daemon.logs()).toMatch(/config\.json is not valid JSON/);
    expect((await daemon.fetch("/health")).status).toBe(200);
    await writeFile(join(home.home, "config.json"), JSON.stringify({ sessions: { attentionDelaySec: 5 } }));
    await until(() => daemon.logs().includes("config.json reloaded"), "the reload", daemon.logs);
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
