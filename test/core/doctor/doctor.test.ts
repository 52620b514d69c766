import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runDoctor } from "../../../core/doctor/doctor.js";
import { makeTempHome } from "../../support/cli.js";

/** The gathering, and the core stores' own checks (sentinels.json, credentials.json, worktrees.json, config.json, runtime.json). */
describe("runDoctor", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-doctor-", { inMemory: true })));
  afterEach(() => cleanup());
  // The files only: the environment checks have their own tests (test/e2e/doctor-environment.test.ts).
  const run = () => runDoctor(home, { env: {}, cwd: home, environment: false });

  it("an empty home is healthy with no findings", async () => {
    expect(await run()).toEqual({ healthy: true, home, store: "file", findings: [] });
  });

  it("config.json holding a secret that group or others can read is a warning with the chmod that fixes it; never the secret", async () => {
    const file = join(home, "config.json");
    await writeFile(file, JSON.stringify({ daemon: { port: 1 } }), { mode: 0o644 });
    await chmod(file, 0o644);
    expect((await run()).findings).toEqual([]);
    await writeFile(file, JSON.stringify({ daemon: { authToken: "tok-doctor-1" }, tunnel: { token: "tok-doctor-2" } }));
    const report = await run();
    expect(report.healthy).toBe(true);
    expect(report.findings).toEqual([
      {
        severity: "warn",
        file: "config.json",
        message: "it holds daemon.authToken, tunnel.token and is readable by group or others (mode 0644)",
        fix: `chmod 600 ${JSON.stringify(file)}; if others could read it, treat those secrets as exposed and rotate them`,
      },
    ]);
    expect(JSON.stringify(report)).not.toMatch(/tok-doctor/);
    await chmod(file, 0o600);
    expect((await run()).findings).toEqual([]);
  });

  it("each core store's damage is an error naming its file, errors first", async () => {
    await writeFile(join(home, "sentinels.json"), "{not json");
    await writeFile(join(home, "credentials.json"), JSON.stringify({ version: 1, values: {} }), { mode: 0o644 });
    await writeFile(join(home, "worktrees.json"), JSON.stringify({ trees: [{ path: "/x", checksum: "sha256:00" }] }));
    await writeFile(join(home, "config.json"), "[]");
    await writeFile(
      join(home, "runtime.json"),
      JSON.stringify({ pid: process.pid, port: 1, bind: "127.0.0.1", token: "t", startedAt: 0, version: "0" }),
      { mode: 0o600 },
    );
    const report = await run();
    expect(report.healthy).toBe(false);
    expect(report.findings.map((f) => [f.severity, f.file])).toEqual([
      ["error", "config.json"],
      ["error", "credentials.json"],
      ["error", "sentinels.json"],
      ["error", "worktrees.json"],
      ["info", "runtime.json"],
    ]);
  });
});
