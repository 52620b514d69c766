import { appendFile, readFile, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { CallRecord } from "../../../core/llm-endpoint/protocol.js";
import { readDay, UsageLog, usageFile } from "../../../core/llm-endpoint/usage-log.js";
import { makeTempHome } from "../../support/cli.js";

const homes: Array<{ cleanup(): Promise<void> }> = [];
afterAll(() => Promise.all(homes.map((h) => h.cleanup())));

const rec = (at: string, n: number): CallRecord => ({
  at,
  sessionId: "ses_a",
  api: "anthropic",
  path: "/v1/messages",
  route: "anthropic",
  model: "claude-sonnet-4-5",
  stream: false,
  status: 200,
  inputTokens: n,
  outputTokens: 1,
  latencyMs: 3,
});

describe("the usage log", () => {
  it("writes checksummed lines to the file of each record's UTC day, and reads them back", async () => {
    const { home, cleanup } = await makeTempHome("svc-llm-usage-");
    homes.push({ cleanup });
    const log = new UsageLog(home);
    await log.append(rec("2026-11-26T23:59:59.000Z", 1));
    await log.append(rec("2026-11-27T00:00:01.000Z", 2));
    await log.append(rec("2026-11-27T08:00:00.000Z", 3));
    await log.close();
    expect((await readDay(home, "2026-11-26")).records.map((r) => r.inputTokens)).toEqual([1]);
    expect((await readDay(home, "2026-11-27")).records.map((r) => r.inputTokens)).toEqual([2, 3]);
    expect(await readFile(usageFile(home, "2026-11-27"), "utf8")).toMatch(/^[0-9a-f]{8} \{"at":"2026-11-27T00:00:01/);
    expect(await readDay(home, "2026-01-01")).toEqual({ records: [], damaged: 0, tornBytes: 0 });
  });

  it("tells a torn tail (dropped) from a damaged line (counted), and appends after a torn tail on a line of its own", async () => {
    const { home, cleanup } = await makeTempHome("svc-llm-usage-");
    homes.push({ cleanup });
    const day = "2026-11-26";
    const log = new UsageLog(home);
    await log.append(rec(`${day}T01:00:00.000Z`, 10));
    await log.append(rec(`${day}T02:00:00.000Z`, 20));
    await log.close();
    const file = usageFile(home, day);
    const text = await readFile(file, "utf8");
    // Damage the first line's body (a byte changed), and leave a torn half line at the end.
    await writeFile(file, text.replace('"inputTokens":10', '"inputTokens":90'));
    await appendFile(file, '1234abcd {"at":"2026-11-26T03');
    const read = await readDay(home, day);
    expect(read.records.map((r) => r.inputTokens)).toEqual([20]);
    expect(read.damaged).toBe(1);
    expect(read.tornBytes).toBeGreaterThan(0);
    const again = new UsageLog(home);
    await again.append(rec(`${day}T04:00:00.000Z`, 40));
    await again.close();
    const after = await readDay(home, day);
    expect(after.records.map((r) => r.inputTokens)).toEqual([20, 40]);
    expect(after.tornBytes).toBe(0);
  });
});
