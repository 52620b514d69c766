import { writeFile } from "node:fs/promises";
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
  const run = () => runDoctor(home, { env: {}, cwd: home });

  it("an empty home is healthy with no findings", async () => {
    expect(await run()).toEqual({ healthy: true, home, findings: [] });
  });

  it("each core store's damage is an error naming its file, errors first", async () => {
    await writeFile(join(home, "sentinels.json"), "{not json");
    await writeFile(join(home, "credentials.json"), JSON.stringify({ version: 1, values: {} }), { mode: 0o644 });
    await writeFile(join(home, "worktrees.json"), JSON.stringify({ trees: [{ path: "/x", checksum: "sha256:00" }] }));
    await writeFile(join(home, "config.json"), "[]");
    await writeFile(join(home, "runtime.json"), JSON.stringify({ pid: process.pid, port: 1, bind: "127.0.0.1", token: "t", startedAt: 0, version: "0" }), { mode: 0o600 });
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
