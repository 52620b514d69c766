/** `svc sentinel replay --since`: the one duration grammar, counted back from an injected now. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replayBody } from "../../../../core/cli/sentinel/actions.js";
import { makeTempHome, runCli } from "../../../support/cli.js";

const NOW = Date.UTC(2026, 10, 27, 9, 0, 0);
const S = 1_000;
const D = 86_400_000;

describe("svc sentinel replay --since", () => {
  it("reads 1w, 30s, 1d, 1.5h and 2 hours (1w, 1.5h and spelled-out units were refused before)", () => {
    expect(replayBody({ since: "1w" }, NOW)).toEqual({ since: NOW - 7 * D });
    expect(replayBody({ since: "30s" }, NOW)).toEqual({ since: NOW - 30 * S });
    expect(replayBody({ since: "1d", dead: true }, NOW)).toEqual({ since: NOW - D, dead: true });
    expect(replayBody({ since: "1.5h" }, NOW)).toEqual({ since: NOW - 5_400 * S });
    expect(replayBody({ since: "2 hours" }, NOW)).toEqual({ since: NOW - 7_200 * S });
  });

  it("still reads an ISO-8601 time and epoch ms; --event passes through", () => {
    expect(replayBody({ since: "2026-11-27T08:00:00Z", event: "e1" }, NOW)).toEqual({
      eventId: "e1",
      since: NOW - 3_600 * S,
    });
    expect(replayBody({ since: String(NOW - 5) }, NOW)).toEqual({ since: NOW - 5 });
  });

  it("refuses anything else in the shared format, naming the flag and what is allowed", () => {
    expect(() => replayBody({ since: "yesterday" }, NOW)).toThrow(
      /^--since "yesterday" is invalid: neither a duration nor an ISO-8601 time; allowed: a duration back from now, e\.g\. 30s, 10m, 2h, 1d, 1w: /,
    );
  });

  describe("through the real CLI", () => {
    let home: string;
    let cleanup: () => Promise<void>;
    beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-replay-")));
    afterEach(() => cleanup());

    it("1w gets past the flag (to the missing daemon); 1x is a usage error, exit 2", async () => {
      const ok = await runCli(["sentinel", "replay", "snt_x", "--since", "1w"], { home });
      expect(ok.code).toBe(1);
      expect(ok.stderr).toContain("no svc daemon is running");
      const bad = await runCli(["sentinel", "replay", "snt_x", "--since", "1x"], { home });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--since "1x" is invalid: neither a duration nor an ISO-8601 time; allowed: ');
    });
  });
});
