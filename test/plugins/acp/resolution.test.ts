import { afterEach, describe, expect, it } from "vitest";
import { defineAdapter, type SessionAdapterInstance } from "../../../core/plugin-api/index.js";
import { allRecipes, resolveRecipe } from "../../../plugins/acp/recipes.js";
import { fixtureAgent, makeHarness, type Harness } from "../../core/sessions/harness.js";

let h: Harness;
afterEach(async () => h?.cleanup());

/** A package adapter (as `@svc/adapter-gemini` would be) that answers without any process. */
const packageGemini = defineAdapter({
  kind: "gemini",
  setup(): SessionAdapterInstance {
    return {
      start: async (_spec, sink) => ({
        kind: "agent",
        prompt: async (text) => {
          sink.update("agent_message_chunk", { content: { type: "text", text: `package: ${text}` } });
          return { stopReason: "end_turn" };
        },
        stop: async () => undefined,
      }),
    };
  },
});

describe("adapter resolution order: package, then config, then catalog", () => {
  it("recipes: a config entry shadows the catalog; malformed entries are ignored", () => {
    expect(resolveRecipe("gemini", undefined)).toMatchObject({
      source: "catalog",
      recipe: { bin: "gemini", bin_args: ["--acp"] },
    });
    expect(resolveRecipe("gemini", { gemini: { bin: "node" } })).toMatchObject({
      source: "config",
      shadows: "catalog",
      recipe: { bin: "node" },
    });
    expect(resolveRecipe("gemini", { gemini: { args: [] } })?.source).toBe("catalog");
    expect(resolveRecipe("nope", {})).toBeUndefined();
    expect(allRecipes({ mine: { bin: "x" } }).map((r) => r.slug)).toContain("mine");
  });

  it("a config ACP agent shadows the catalog entry when a session starts", async () => {
    h = await makeHarness({ acpAgents: { gemini: fixtureAgent("echo-agent.mjs") } });
    const { descriptor, result } = await h.runtime.start({ adapter: "gemini", cwd: h.home, prompt: "hi" });
    expect(descriptor.source).toBe("config");
    expect((await h.runtime.waitFor(descriptor.id, result!.promptId)).text).toBe("echo: hi");
  });

  it("a config entry shadowing a catalog slug keeps the catalog's API key variable", async () => {
    expect(resolveRecipe("gemini", { gemini: { bin: "node" } })?.recipe.apiKeyEnv).toBe("GEMINI_API_KEY");
    expect(resolveRecipe("mine", { mine: { bin: "node" } })?.recipe.apiKeyEnv).toBeUndefined();
    const secret = "gm-key-0123456789";
    h = await makeHarness({
      acpAgents: { gemini: fixtureAgent("env-agent.mjs") },
      defaults: { adapters: { gemini: { auth: { mode: "api-key", apiKey: secret } } } },
    });
    const { descriptor, result } = await h.runtime.start({
      adapter: "gemini",
      cwd: h.home,
      prompt: "GEMINI_API_KEY SVC_ADAPTER_API_KEY",
    });
    expect(descriptor.source).toBe("config");
    const seen = JSON.parse((await h.runtime.waitFor(descriptor.id, result!.promptId)).text);
    expect(seen).toEqual({ GEMINI_API_KEY: secret.length, SVC_ADAPTER_API_KEY: 0 });
  });

  it("a package adapter of that kind wins over the config entry; a built-in plugin of that kind does not", async () => {
    h = await makeHarness({ acpAgents: { gemini: fixtureAgent("echo-agent.mjs") } }, [
      { plugin: packageGemini, builtin: false },
    ]);
    const { descriptor, result } = await h.runtime.start({ adapter: "gemini", cwd: h.home, prompt: "hi" });
    expect(descriptor.source).toBe("package");
    expect((await h.runtime.waitFor(descriptor.id, result!.promptId)).text).toBe("package: hi");
    await h.cleanup();
    h = await makeHarness({ acpAgents: { gemini: fixtureAgent("echo-agent.mjs") } }, [
      { plugin: packageGemini, builtin: true },
    ]);
    expect((await h.runtime.start({ adapter: "gemini", cwd: h.home })).descriptor.source).toBe("config");
  });
});
