import { afterEach, describe, expect, it, vi } from "vitest";
import { groupKiller, processKiller, terminateAndWait } from "../../../core/sessions/terminate.js";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("terminateAndWait", () => {
  // The escalation itself: see the pty stop test in test/plugins/terminal-presets and test/plugins/acp/acp-stop.test.ts.
  it("sends no SIGKILL when the process exits within the grace (a custom one)", async () => {
    vi.useFakeTimers();
    const signals: string[] = [];
    let exit!: () => void;
    const exited = new Promise<void>((r) => (exit = r));
    const stop = terminateAndWait((sig) => void signals.push(sig), exited, 100);
    await vi.advanceTimersByTimeAsync(50);
    exit();
    await stop;
    await vi.advanceTimersByTimeAsync(1000);
    expect(signals).toEqual(["SIGTERM"]);
  });

  it("rejects with the error when the SIGKILL cannot be sent, instead of waiting for an exit that will not come", async () => {
    vi.useFakeTimers();
    const kill = (sig: NodeJS.Signals) => {
      if (sig === "SIGKILL") throw Object.assign(new Error("not permitted"), { code: "EPERM" });
    };
    const stop = terminateAndWait(kill, new Promise<void>(() => undefined), 100);
    const outcome = expect(stop).rejects.toThrow("not permitted");
    await vi.advanceTimersByTimeAsync(100);
    await outcome;
  });
});

describe("groupKiller", () => {
  it("signals the process group (negative pid) and ignores a group that is already gone", () => {
    const kill = vi.spyOn(process, "kill").mockImplementationOnce(() => true);
    groupKiller(4242)("SIGTERM");
    expect(kill).toHaveBeenCalledWith(-4242, "SIGTERM");
    kill.mockImplementationOnce(() => {
      throw Object.assign(new Error("no such process"), { code: "ESRCH" });
    });
    expect(() => groupKiller(4242)("SIGKILL")).not.toThrow();
    kill.mockImplementationOnce(() => {
      throw Object.assign(new Error("not permitted"), { code: "EPERM" });
    });
    expect(() => groupKiller(4242)("SIGKILL")).toThrow("not permitted");
  });
});

describe("processKiller", () => {
  it("signals the one process (positive pid) and ignores one that is already gone", () => {
    const kill = vi.spyOn(process, "kill").mockImplementationOnce(() => true);
    processKiller(4242)("SIGTERM");
    expect(kill).toHaveBeenCalledWith(4242, "SIGTERM");
    kill.mockImplementationOnce(() => {
      throw Object.assign(new Error("no such process"), { code: "ESRCH" });
    });
    expect(() => processKiller(4242)("SIGKILL")).not.toThrow();
  });
});
