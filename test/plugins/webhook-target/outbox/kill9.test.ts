import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { makeTempHome } from "../../../support/cli.js";
import { FIXTURES } from "../../../support/paths.js";

const WRITER = join(FIXTURES, "webhook/outbox-writer.mjs");

/** Runs the writer until it has printed `lines` lines plus a random delay, then kills it with SIGKILL. */
function runAndKill(home: string, start: number, minLines: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, home, String(start)], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    let err = "";
    let armed = false;
    child.stdout.on("data", (d) => {
      text += d;
      if (!armed && text.split("\n").length > minLines) {
        armed = true;
        setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 40));
      }
    });
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("exit", (_code, signal) => {
      if (signal !== "SIGKILL") return reject(new Error(`writer exited on its own: ${err}`));
      resolve(text.split("\n").filter((l) => l.endsWith("\n") || l.length > 0));
    });
  });
}

describe("outbox under kill -9", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-outbox-k9-")));
  afterEach(() => cleanup());

  it("keeps every acknowledged row and status change, with intact bodies, across 6 kills", async () => {
    const added = new Map<string, { requestId: string; sha: string }>();
    const minAttempts = new Map<string, number>();
    for (let round = 0; round < 6; round++) {
      const lines = await runAndKill(home, round * 100_000, 20 + Math.floor(Math.random() * 60));
      // The last line may be cut mid-write: only complete lines count as acknowledged.
      for (const line of lines.slice(0, -1)) {
        const [op, a, b, c] = line.split(" ");
        if (op === "add") added.set(a!, { requestId: b!, sha: c! });
        if (op === "upd") minAttempts.set(a!, Math.max(minAttempts.get(a!) ?? 0, Number(c)));
      }
      const ob = await Outbox.open({
        home,
        now: Date.now,
        newId: () => `req_parent_${round}`,
        logger: createMemoryLogger(),
      });
      try {
        for (const [eventId, want] of added) {
          const row = ob.get(want.requestId);
          expect(row, `row for ${eventId}`).toBeDefined();
          expect(row!.eventId).toBe(eventId);
          const body = await ob.readBody(row!);
          expect(createHash("sha256").update(body).digest("hex")).toBe(want.sha);
        }
        for (const [requestId, attempts] of minAttempts) {
          expect(ob.get(requestId)!.deliveryState.attempts).toBeGreaterThanOrEqual(attempts);
        }
        const keys = ob.rowsOf("snt_k").map((r) => r.eventId);
        expect(new Set(keys).size).toBe(keys.length);
      } finally {
        await ob.close();
      }
    }
    expect(added.size).toBeGreaterThan(100);
  });
});
