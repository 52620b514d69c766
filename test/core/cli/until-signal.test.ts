import { describe, expect, it } from "vitest";
import { untilSignal } from "../../../core/cli/until-signal.js";

const handlers = () => process.listenerCount("SIGINT") + process.listenerCount("SIGTERM");

describe("untilSignal", () => {
  it("runs stop at SIGINT, resolves once it is done, and removes its handlers", async () => {
    const before = handlers();
    let stopped = false;
    const waiting = untilSignal(async () => {
      stopped = true;
    });
    expect(handlers()).toBe(before + 2);
    process.emit("SIGINT");
    await waiting;
    expect(stopped).toBe(true);
    expect(handlers()).toBe(before);
  });

  it("with done: resolves when it settles (resolved or rejected), without stop, its handlers removed", async () => {
    const before = handlers();
    for (const done of [Promise.resolve(), Promise.reject(new Error("broke"))]) {
      let stopped = false;
      await untilSignal(async () => {
        stopped = true;
      }, done);
      expect(stopped).toBe(false);
      expect(handlers()).toBe(before);
    }
  });

  it("with done: a signal first still waits for stop, even when done settles meanwhile", async () => {
    let finishStop!: () => void;
    let settleDone!: () => void;
    const done = new Promise<void>((r) => (settleDone = r));
    let resolved = false;
    const waiting = untilSignal(() => new Promise<void>((r) => (finishStop = r)), done).then(() => {
      resolved = true;
    });
    process.emit("SIGTERM");
    settleDone();
    await new Promise((r) => setImmediate(r));
    expect(resolved).toBe(false);
    finishStop();
    await waiting;
    expect(resolved).toBe(true);
  });
});
