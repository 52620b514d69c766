import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readSessionRecord, writeSessionRecord, type SessionRecord } from "../../../core/sessions/session-record.js";
import { makeTempHome } from "../../support/cli.js";

let home: { home: string; cleanup(): Promise<void> };
beforeEach(async () => {
  home = await makeTempHome("svc-record-");
});
afterEach(() => home.cleanup());

const record: SessionRecord = {
  id: "ses_A",
  adapter: "keeper",
  source: "config",
  kind: "agent",
  cwd: "/work",
  parentId: "ses_P",
  depth: 1,
  role: "worker",
  createdAt: 1,
  options: { model: "m" },
  skills: ["s"],
  delegation: 0,
  agentSessionId: "agent-1",
};

describe("session records", () => {
  it("reads back what was written; a session without one is missing", async () => {
    await writeSessionRecord(home.home, record);
    expect(await readSessionRecord(home.home, "ses_A")).toEqual({ state: "ok", record });
    expect(await readSessionRecord(home.home, "ses_B")).toEqual({ state: "missing" });
  });

  it("tells each kind of damage, and leaves the file as it is", async () => {
    const path = join(home.home, "ses_A", "session.json");
    await writeSessionRecord(home.home, record);
    const good = await readFile(path, "utf8");
    const cases: Array<[string, string]> = [
      [good.slice(0, 40), "it is not JSON"],
      [good.replace('"depth":1', '"depth":2'), "its checksum does not match"],
      [good.replace('"version":1', '"version":9'), "its version is 9"],
      [good.replace(/"checksum":"[0-9a-f]+"/, '"checksum":"00000000"'), "its checksum does not match"],
    ];
    for (const [text, reason] of cases) {
      await writeFile(path, text);
      const read = await readSessionRecord(home.home, "ses_A");
      expect(read, reason).toMatchObject({ state: "damaged", path });
      expect((read as { reason: string }).reason).toContain(reason);
      expect(await readFile(path, "utf8")).toBe(text);
    }
    // A well-formed record of another session, or with a field that does not validate.
    await mkdir(join(home.home, "ses_B"), { recursive: true });
    await writeFile(join(home.home, "ses_B", "session.json"), good);
    expect(await readSessionRecord(home.home, "ses_B")).toMatchObject({
      state: "damaged",
      reason: "it names session ses_A",
    });
    await writeSessionRecord(home.home, { ...record, depth: -1 } as SessionRecord);
    expect(await readSessionRecord(home.home, "ses_A")).toMatchObject({
      state: "damaged",
      reason: expect.stringContaining("field depth"),
    });
  });
});
