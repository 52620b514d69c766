import { afterAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../../core/config/resolve.js";
import type { SvcConfigFile } from "../../../core/config/schema.js";
import { injectedKeys, routedProviders, sidecarSettings } from "../../../core/llm-endpoint/settings.js";
import { FileCredentialStore } from "../../../core/storage/credentials.js";
import { makeTempHome } from "../../support/cli.js";

const homes: Array<{ cleanup(): Promise<void> }> = [];
afterAll(() => Promise.all(homes.map((h) => h.cleanup())));

async function settingsOf(file: SvcConfigFile, env: NodeJS.ProcessEnv = {}, stored: Record<string, string> = {}) {
  const h = await makeTempHome("svc-llm-settings-");
  homes.push(h);
  const creds = new FileCredentialStore(h.home);
  for (const [k, v] of Object.entries(stored)) await creds.set("llm-endpoint", k, v);
  return sidecarSettings(resolveConfig(file, { SVC_HOME: h.home }).effective, creds, env);
}

describe("sidecarSettings", () => {
  it("built-in routes take their keys from the catalog adapters' auth (apiKey over token), then credentials.json, then the daemon's env", async () => {
    const s = await settingsOf(
      { defaults: { adapters: { claude: { auth: { token: "tok-a", apiKey: "key-a" } } } } },
      { OPENAI_API_KEY: "env-o", ANTHROPIC_API_KEY: "env-a" },
    );
    const byName = Object.fromEntries(s.routes.map((r) => [r.name, r]));
    expect(byName.anthropic).toMatchObject({
      provider: "anthropic",
      baseUrl: "https://api.anthropic.com",
      key: { kind: "apiKey", value: "key-a", from: "defaults.adapters.claude.auth.apiKey" },
    });
    expect(byName.openai).toMatchObject({
      provider: "openai",
      baseUrl: "https://api.openai.com/v1",
      key: { value: "env-o", from: "the daemon's OPENAI_API_KEY" },
    });
    const stored = await settingsOf({}, { OPENAI_API_KEY: "env-o" }, { openai: "cred-o" });
    expect(stored.routes.find((r) => r.name === "openai")!.key).toEqual({
      kind: "apiKey",
      value: "cred-o",
      from: "credentials.json llm-endpoint/openai",
    });
    const token = await settingsOf({ defaults: { adapters: { codex: { auth: { token: "tok-o" } } } } });
    expect(token.routes.find((r) => r.name === "openai")!.key).toMatchObject({ kind: "token", value: "tok-o" });
  });

  it("the built-in gemini route serves gemini-* at Google's API with the gemini adapter's key, else the daemon's GEMINI_API_KEY", async () => {
    const s = await settingsOf({ defaults: { adapters: { gemini: { auth: { apiKey: "gem-a" } } } } });
    expect(s.routes.find((r) => r.name === "gemini")).toEqual({
      name: "gemini",
      provider: "gemini",
      baseUrl: "https://generativelanguage.googleapis.com",
      models: ["gemini-*"],
      keyFrom: "gemini",
      key: { kind: "apiKey", value: "gem-a", from: "defaults.adapters.gemini.auth.apiKey" },
    });
    expect([...routedProviders(s.routes)]).toEqual(["gemini"]);
    const env = await settingsOf({}, { GEMINI_API_KEY: "env-g" });
    expect(env.routes.find((r) => r.name === "gemini")!.key).toMatchObject({ from: "the daemon's GEMINI_API_KEY" });
  });

  it("an upstream replaces the built-in of its name; a keyFrom route takes that adapter's key, never the env's; a route without a key is kept, keyless", async () => {
    const s = await settingsOf(
      {
        llmEndpoint: {
          port: 0,
          upstreams: {
            anthropic: { provider: "anthropic", baseUrl: "http://127.0.0.1:9/", models: ["claude-x"] },
            local: { provider: "openai", baseUrl: "http://127.0.0.1:4000/v1", keyFrom: "mine" },
          },
        },
        defaults: { adapters: { mine: { auth: { apiKey: "mine-key" } } } },
      },
      { ANTHROPIC_API_KEY: "env-a" },
    );
    const byName = Object.fromEntries(s.routes.map((r) => [r.name, r]));
    expect(byName.anthropic).toMatchObject({
      baseUrl: "http://127.0.0.1:9",
      models: ["claude-x"],
      key: { value: "env-a" },
    });
    expect(byName.local).toMatchObject({ provider: "openai", models: [], key: { value: "mine-key" } });
    expect(byName.openai!.key).toBeUndefined();
    expect(s.port).toBe(0);
    expect([...routedProviders(s.routes)]).toEqual(["anthropic", "openai"]);
  });

  it("roles carry their route, and their profile's key; every injected key is listed", async () => {
    const s = await settingsOf({
      models: {
        "review.small": { model: "claude-haiku-4-5", route: "anthropic", profile: "billing" },
        fast: "role:review.small",
      },
      defaults: {
        adapters: { billing: { auth: { apiKey: "billing-key" } }, claude: { auth: { apiKey: "claude-key" } } },
      },
    });
    expect(s.roles.find((r) => r.role === "fast")).toEqual({
      role: "fast",
      model: "claude-haiku-4-5",
      route: "anthropic",
      key: { kind: "apiKey", value: "billing-key", from: "defaults.adapters.billing.auth.apiKey" },
    });
    expect([...injectedKeys(s)].sort()).toEqual(["billing-key", "claude-key"]);
    expect(s.upstreamTimeoutMs).toBe(600_000);
    expect(s.port).toBe(18792);
  });

  it("the steward's judge: a route of its own from extJudge (never routing sessions' openai calls) and the role the steward names", async () => {
    const none = await settingsOf({});
    expect(none.routes.map((r) => r.name)).not.toContain("ext-judge");
    const s = await settingsOf({ extJudge: { apiKey: "judge-key", baseUrl: "http://127.0.0.1:7/v1/", model: "j-1" } });
    expect(s.routes.find((r) => r.name === "ext-judge")).toMatchObject({
      provider: "openai",
      baseUrl: "http://127.0.0.1:7/v1",
      models: [],
      key: { kind: "apiKey", value: "judge-key" },
    });
    expect(s.roles.find((r) => r.role === "svc.steward-judge")).toEqual({
      role: "svc.steward-judge",
      model: "j-1",
      route: "ext-judge",
    });
    expect([...routedProviders(s.routes)]).toEqual([]);
    expect(injectedKeys(s)).toContain("judge-key");
    const viaRole = await settingsOf({
      extJudge: { apiKey: "judge-key" },
      models: { "judge.session": { model: "gpt-judge", route: "openai" } },
    });
    expect(viaRole.roles.find((r) => r.role === "svc.steward-judge")).toEqual({
      role: "svc.steward-judge",
      model: "gpt-judge",
      route: "openai",
    });
  });
});
