import { afterEach, describe, expect, it } from "vitest";
import { STOP_GRACE_MS } from "../../../core/plugin-api/index.js";
import { FIXTURE_AGENTS, fixtureAgent, makeHarness, type Harness } from "../../core/sessions/harness.js";
import { processAlive } from "../../support/process-alive.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe("ACP stop", () => {
  it("kills an agent that ignores SIGTERM once the grace has passed, and the session still ends as stopped", async () => {
    h = await makeHarness({ acpAgents: { ...FIXTURE_AGENTS, stubborn: fixtureAgent("stubborn-agent.mjs") } });
    const { descriptor } = await h.runtime.start({ adapter: "stubborn", cwd: h.home });
    const t0 = Date.now();
    const stopped = await h.runtime.stop(descriptor.id);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(STOP_GRACE_MS - 50);
    // No upper bound: how soon after the grace the exit is seen depends on the machine's load (the
    // SIGKILL itself, at the grace exactly: terminal.test.ts's fake-timer stop test).
    expect(processAlive(descriptor.pid!)).toBe(false);
    expect(stopped).toMatchObject({ state: "ended", exit: { signal: "SIGKILL", error: "stopped" } });
  });
});
