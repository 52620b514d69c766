import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, startDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { until } from "../support/until.js";

let home: string;
let cleanup: () => Promise<void>;
let daemon: DaemonProcess | undefined;
beforeEach(async () => ({ home, cleanup } = await makeTempHome()));
afterEach(async () => {
  await daemon?.kill9();
  await cleanup();
});

describe("svc serve gives memory back when idle", () => {
  it("collects once idle after a burst of work, and its committed heap shrinks", async () => {
    daemon = await startDaemonProcess({ home, env: { SVC_LOG_LEVEL: "debug" } });
    const d = daemon;
    // A burst: pushed events (matching no sentinel) that V8 answers by growing its young generation.
    const pad = "x".repeat(2_000);
    for (let b = 0; b < 60; b++) {
      const batch = Array.from({ length: 500 }, (_, i) => ({
        id: `burst_${b}_${i}`,
        type: "test.burst.made",
        subjects: ["burst:none"],
        data: { pad },
      }));
      const res = await d.fetch("/providers/agentpush/events", { method: "POST", body: JSON.stringify(batch) });
      expect(res.status, await res.text()).toBeLessThan(300);
    }
    // The first collection may find V8 not yet willing to shrink its young generation; a next one does.
    const shrunk = await until(
      () =>
        [...d.logs().matchAll(/idle collection\D+heapMiBBefore\D+(\d+)\D+heapMiBAfter\D+(\d+)/g)].find(
          (m) => Number(m[2]) < Number(m[1]) - 4,
        ),
      "an idle collection that shrank the heap, in the daemon's debug log",
      60_000,
    );
    expect(Number(shrunk[2])).toBeLessThan(Number(shrunk[1]));
    expect((await d.fetch("/health", { auth: false })).status).toBe(200);
    expect(await d.stop()).toBe(0);
  });
});
