import { describe, expect, it } from "vitest";
import { redact, sessionSecrets, StderrTail } from "../../../plugins/acp/stderr-tail.js";

describe("the agent's stderr tail", () => {
  it("replaces every occurrence of each secret, split across chunks too", () => {
    const tail = new StderrTail(["sk-abc123", "tok-9"]);
    tail.push("key sk-ab");
    tail.push("c123 and tok-9\nagain sk-abc123\n");
    expect(tail.lines()).toBe("key [redacted] and [redacted] | again [redacted]");
  });

  it("drops the first kept line once older chunks were dropped (it may start mid-secret)", () => {
    const tail = new StderrTail(["sk-abc123"]);
    tail.push("x sk-ab");
    for (let i = 0; i < 20; i++) tail.push(i === 0 ? "c123 partial\n" : `line ${i}\n`);
    expect(tail.lines(30)).not.toContain("c123");
    expect(tail.lines(2)).toBe("line 18 | line 19");
  });

  it("collects auth apiKey, token and the values of the agent's secret-named environment variables", () => {
    const secrets = sessionSecrets(
      { apiKey: "k1", token: "t1" },
      { MY_API_KEY: "k2", GH_TOKEN: "t2", LOG_LEVEL: "debug", EMPTY_TOKEN: "" },
    );
    expect(secrets.sort()).toEqual(["k1", "k2", "t1", "t2"]);
    expect(redact("a k1 b t2 debug", secrets)).toBe("a [redacted] b [redacted] debug");
  });
});
