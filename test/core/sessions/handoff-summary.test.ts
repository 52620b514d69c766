import { describe, expect, it } from "vitest";
import { handoffSummary } from "../../../core/sessions/handoff-summary.js";
import type { TranscriptLine } from "../../../core/sessions/transcript.js";

let seq = 0;
const line = (type: string, data: unknown): TranscriptLine => ({ seq: ++seq, at: 0, type, data });
const prompt = (text: string, kind = "human") => line("prompt", { promptId: `p${seq}`, sender: { kind }, text });
const reply = (text: string) => line("turn.ended", { promptId: `p${seq}`, stopReason: "end_turn", text });
const why = { fromSessionId: "ses_OLD", pct: 86.5, key: "continueFreshAtPct", atPct: 85 };

describe("handoff summary", () => {
  it("says why, then the first prompt, the latest three prompts (not svc's own) and the latest reply", () => {
    const lines = [
      prompt("write the parser"),
      reply("done 1"),
      ...["a", "b", "c", "d"].flatMap((t) => [prompt(t), reply(`r ${t}`)]),
      prompt("/compact", "system"),
      reply(""),
    ];
    const text = handoffSummary(lines, why);
    expect(text).toMatch(
      /^\[svc handoff\] You continue session ses_OLD, which reached 86.5% of its model's context window \(defaults.contextContinuity.continueFreshAtPct is 85\)/,
    );
    expect(text).toContain("## First prompt\nwrite the parser");
    expect(text).toContain("## Latest prompts (oldest first)\n1. b\n2. c\n3. d");
    expect(text).toContain("## The agent's latest reply\nr d");
    expect(text).not.toContain("/compact");
  });

  it("stays bounded whatever the transcript holds, keeping each part's ends", () => {
    const huge = "x".repeat(1_000_000);
    const text = handoffSummary(
      [prompt(`START${huge}`), ...Array.from({ length: 50 }, () => prompt(huge)), reply(`${huge}END`)],
      why,
    );
    expect(text.length).toBeLessThan(11_000);
    expect(text).toContain("## First prompt\nSTART");
    expect(text).toMatch(/END$/);
    expect(text).toContain("more characters]");
  });

  it("a continued session's handoff counts as its task, so a second continuation carries it on", () => {
    const first = handoffSummary([prompt("the real task"), reply("ok")], why);
    const second = handoffSummary([prompt(first, "system"), reply("went on")], { ...why, fromSessionId: "ses_MID" });
    expect(second).toContain("## First prompt\n[svc handoff] You continue session ses_OLD");
    expect(second).toContain("the real task");
  });
});
