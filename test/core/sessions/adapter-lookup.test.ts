/** Issue 13: an adapter whose package failed to load is plugin_load_failed, not "no adapter" or a fallback to ACP. */
import { describe, expect, it } from "vitest";
import { resolveAdapter, type AdapterLookup } from "../../../core/sessions/adapter-lookup.js";

describe("resolveAdapter", () => {
  const acp = {
    start: async () => ({}) as never,
    sourceOf: (slug: string) => (slug === "echo" ? ("config" as const) : undefined),
  };
  const lookup = (failed: Record<string, string>): AdapterLookup => ({
    find: (kind) => (kind === "acp" ? { builtin: true } : undefined),
    instance: async () => acp as never,
    failure: (kind) => failed[kind],
  });

  it("names the failed package instead of falling back to an acpAgents entry of the same slug", async () => {
    await expect(
      resolveAdapter(
        lookup({ echo: 'adapter plugin "echo" from package pkg-echo failed to load (phase import): boom' }),
        "echo",
      ),
    ).rejects.toMatchObject({
      code: "plugin_load_failed",
      message: expect.stringMatching(/package pkg-echo failed to load \(phase import\)/),
    });
  });

  it("without a failure, the slug resolves through ACP as before", async () => {
    expect((await resolveAdapter(lookup({}), "echo")).source).toBe("config");
    await expect(resolveAdapter(lookup({}), "nope")).rejects.toMatchObject({ code: "not_found" });
  });
});
