import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ChildMessage } from "../../../core/llm-endpoint/protocol.js";
import { SidecarSupervisor } from "../../../core/llm-endpoint/supervisor.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { SIDECAR_MAIN } from "../../support/llm-sidecar.js";
import { processAlive } from "../../support/process-alive.js";

const configure = {
  type: "configure" as const,
  routes: [],
  roles: [],
  budgets: {},
  upstreamTimeoutMs: 5000,
  day: { date: "2026-11-26", tokens: 0 },
};
const running: SidecarSupervisor[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

function supervisor(port: number, messages: ChildMessage[] = []) {
  const s = new SidecarSupervisor({
    entry: SIDECAR_MAIN,
    port,
    logger: createMemoryLogger(),
    env: process.env,
    replay: () => [configure],
    onMessage: (m) => messages.push(m),
  });
  running.push(s);
  return s;
}

async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("SidecarSupervisor (the real sidecar)", () => {
  it("a port held by another process fails the start with the port and the cause, and leaves no child", async () => {
    const busy = createServer();
    servers.push(busy);
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
    const port = (busy.address() as { port: number }).port;
    const s = supervisor(port);
    await expect(s.start()).rejects.toThrow(`cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    expect(s.status()).toMatchObject({ state: "failed", lastError: expect.stringContaining("EADDRINUSE") });
    await until(() => s.status().pid === undefined, "no child");
  });

  it("port 0 binds a free port; a child killed with -9 is replaced on that same port; stop ends it", async () => {
    const s = supervisor(0);
    const port = await s.start();
    expect(port).toBeGreaterThan(0);
    const first = s.status().pid!;
    process.kill(first, "SIGKILL");
    const back = await until(
      () => (s.status().state === "running" && s.status().pid !== first ? s.status() : undefined),
      "the restart",
    );
    expect(back).toMatchObject({ port, restarts: 1, lastExit: { signal: "SIGKILL" } });
    await s.stop();
    expect(s.status().state).toBe("stopped");
    await until(() => !processAlive(back.pid!), "the child to end");
  });
});
