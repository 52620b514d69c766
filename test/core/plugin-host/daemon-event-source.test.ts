/** The host service "daemonEvents" (issue 27): plugins hear the daemon's events, read-only. */
import { describe, expect, it } from "vitest";
import { DaemonEventBus } from "../../../core/daemon/event-bus.js";
import { daemonEventSource } from "../../../core/plugin-host/daemon-event-source.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import type { HeardDaemonEvent } from "../../../core/plugin-api/index.js";

describe("daemonEvents", () => {
  it("hands a listener the events under its prefix, each a copy, until it stops listening", () => {
    const bus = new DaemonEventBus();
    const logger = createMemoryLogger();
    const heard: HeardDaemonEvent[] = [];
    const stop = daemonEventSource(bus, logger).subscribe("session:", (e) => {
      heard.push(e);
      (e.data as { sessionId: string }).sessionId = "changed";
    });
    const data = { sessionId: "s1" };
    bus.emit("sentinel:matched", { sessionId: "s1" });
    bus.emit("session:started", data);
    expect(heard).toEqual([
      { seq: 2, at: expect.any(Number), type: "session:started", data: { sessionId: "changed" } },
    ]);
    expect(data.sessionId).toBe("s1");
    expect(bus.since(0)[1]!.data).toEqual({ sessionId: "s1" });
    stop();
    bus.emit("session:ended", data);
    expect(heard).toHaveLength(1);
  });

  it("redacts what /events would: values under secret-looking keys and secret-shaped strings", () => {
    const bus = new DaemonEventBus();
    const heard: HeardDaemonEvent[] = [];
    daemonEventSource(bus, createMemoryLogger()).subscribe("session:", (e) => heard.push(e));
    bus.emit("session:verdict", { sessionId: "s1", apiKey: "k-123", suggestedPrompt: `whsec_${"A".repeat(32)}` });
    expect(heard[0]!.data).toEqual({ sessionId: "s1", apiKey: "[redacted]", suggestedPrompt: "[redacted]" });
  });

  it("logs a listener that throws and goes on: the emitter and the other listeners are not disturbed", () => {
    const bus = new DaemonEventBus();
    const logger = createMemoryLogger();
    const source = daemonEventSource(bus, logger);
    const heard: string[] = [];
    source.subscribe("", () => {
      throw new Error("plugin bug");
    });
    source.subscribe("", (e) => heard.push(e.type));
    expect(() => bus.emit("session:started", { sessionId: "a" })).not.toThrow();
    bus.emit("session:ended", { sessionId: "a" });
    expect(heard).toEqual(["session:started", "session:ended"]);
    expect(logger.lines.filter((l) => l.includes("plugin bug"))).toHaveLength(2);
  });
});
