/** Issue 13, "The CLI": each rough edge as a new user met it, against the built CLI. */
import { spawn } from "node:child_process";
import { chmod, readdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkWebhookUrl } from "../../../core/cli/webhooks/check.js";
import { childEnv, makeTempHome, runCli } from "../../support/cli.js";
import { CLI_PATH } from "../../support/paths.js";

describe("CLI rough edges", () => {
  it("`svc config show --effective | head -1` ends quietly: no EPIPE stack trace", async () => {
    const t = await makeTempHome();
    // `head -1` may read the whole (small) output before it exits, so EPIPE is a race there;
    // `true` never reads, so every write after it exits meets a closed pipe.
    const piped = (reader: string) =>
      new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
        const child = spawn(
          "bash",
          ["-c", `set -o pipefail; "${process.execPath}" "${CLI_PATH}" config show --effective | ${reader}`],
          { env: childEnv(t.home) },
        );
        let stderr = "";
        let stdout = "";
        child.stderr.on("data", (c) => (stderr += c));
        child.stdout.on("data", (c) => (stdout += c));
        child.on("close", (code) => resolve({ code, stderr, stdout }));
      });
    try {
      const out = await piped("head -1");
      expect(out.stdout.split("\n").filter(Boolean)).toHaveLength(1);
      expect(out.stderr).not.toMatch(/EPIPE|Unhandled|at /);
      const closed = await piped("true");
      expect(closed.stderr).not.toMatch(/EPIPE|Unhandled|at /);
      expect(closed.code).toBe(0);
    } finally {
      await t.cleanup();
    }
  });

  it("config set of an unknown key keeps it but warns and suggests the key meant", async () => {
    const t = await makeTempHome();
    try {
      const r = await runCli(["config", "set", "daemon.prot", "1234"], { home: t.home });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/daemon\.prot is not a key svc knows; it is kept .*did you mean daemon\.port\?/);
      expect((await runCli(["config", "get", "daemon.prot"], { home: t.home })).stdout).toContain("1234");
      expect((await runCli(["config", "set", "$schema", "./config.schema.json"], { home: t.home })).stderr).toBe("");
    } finally {
      await t.cleanup();
    }
  });

  it("range errors say the range and the value", async () => {
    const t = await makeTempHome();
    try {
      const r = await runCli(["config", "set", "daemon.port", "70000"], { home: t.home });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/key daemon\.port: must be 0\.\.65535, got 70000/);
      expect(r.stderr).not.toMatch(/Too big/);
    } finally {
      await t.cleanup();
    }
  });

  it("every verb with --json prints its errors as JSON too (usage errors included)", async () => {
    const t = await makeTempHome();
    try {
      const noDaemon = await runCli(["sentinel", "list", "--json"], { home: t.home });
      expect(noDaemon.code).toBe(1);
      expect(JSON.parse(noDaemon.stdout)).toEqual({
        error: { code: "daemon_not_running", message: expect.stringMatching(/no svc daemon is running/) },
      });
      const usage = await runCli(["sentinel", "list", "--json", "--bogus"], { home: t.home });
      expect(usage.code).toBe(2);
      expect(JSON.parse(usage.stdout).error).toMatchObject({
        code: "usage",
        message: expect.stringMatching(/unknown option '--bogus'/),
      });
      expect(usage.stderr).toBe("");
    } finally {
      await t.cleanup();
    }
  });

  it("config set of a secret-bearing key warns when config.json is readable by others", async () => {
    const t = await makeTempHome();
    try {
      await writeFile(join(t.home, "config.json"), "{}\n");
      await chmod(join(t.home, "config.json"), 0o644);
      const r = await runCli(["config", "set", "daemon.authToken"], { home: t.home, input: "tok-abcdef-123\n" });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(
        /holds daemon\.authToken and is readable by group or others \(mode 0644\); run chmod 600/,
      );
      expect(r.stderr + r.stdout).not.toContain("tok-abcdef-123");
      await chmod(join(t.home, "config.json"), 0o600);
      expect((await runCli(["config", "set", "daemon.authToken"], { home: t.home, input: "tok-2\n" })).stderr).toBe("");
    } finally {
      await t.cleanup();
    }
  });

  it("webhooks check applies the creation's URL rule: credentials in the URL are refused", async () => {
    const r = await checkWebhookUrl("https://user:pw@hooks.example/x", {
      resolver: { lookupAll: async () => [{ address: "93.184.216.34", family: 4 as const }] },
      allowSubnets: [],
    });
    expect(r).toMatchObject({
      allowed: false,
      failure: "invalid_input",
      reason: expect.stringMatching(/must not carry credentials/),
    });
  });

  it("a svc serve that cannot bind its port writes nothing under $SVC_HOME", async () => {
    const t = await makeTempHome();
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    try {
      const port = (busy.address() as { port: number }).port;
      const r = await runCli(["serve", "--port", String(port)], { home: t.home });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/already in use/);
      expect(await readdir(t.home)).toEqual([]);
      // Nor does it leave a $SVC_HOME that did not exist before.
      const fresh = join(t.home, "not-yet");
      expect((await runCli(["serve", "--port", String(port)], { home: fresh })).code).toBe(1);
      expect(await readdir(t.home)).toEqual([]);
    } finally {
      busy.close();
      await t.cleanup();
    }
  });
});
