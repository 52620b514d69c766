import { describe, expect, it } from "vitest";
import { contextWindowOf, MODEL_CATALOG } from "../../../core/config/model-catalog.js";

describe("model catalog context windows", () => {
  it("sizes each catalog model; ext-latest has none", () => {
    expect(Object.fromEntries(MODEL_CATALOG.map((m) => [m.id, contextWindowOf(m.id)]))).toEqual({
      "claude-haiku-4-5": 200_000,
      "claude-sonnet-4-5": 200_000,
      "claude-opus-4-5": 200_000,
      "gpt-5": 400_000,
      "gpt-5-mini": 400_000,
      "gemini-2.5-pro": 1_048_576,
      "gemini-2.5-flash": 1_048_576,
      "ext-latest": undefined,
    });
  });

  it("a dated or suffixed id takes its catalog model's window (the longest id that it extends)", () => {
    expect(contextWindowOf("claude-sonnet-4-5-20250929")).toBe(200_000);
    expect(contextWindowOf("claude-opus-4-5@20251101")).toBe(200_000);
    expect(contextWindowOf("gpt-5-mini-2025-08-07")).toBe(400_000);
    expect(contextWindowOf("gemini-2.5-flash-preview-09-2025")).toBe(1_048_576);
  });

  it("an id that only shares a prefix, or is unknown, has no window", () => {
    expect(contextWindowOf("gpt-50")).toBeUndefined();
    expect(contextWindowOf("claude-sonnet-4-50")).toBeUndefined();
    expect(contextWindowOf("llama-3")).toBeUndefined();
    expect(contextWindowOf("")).toBeUndefined();
  });
});
