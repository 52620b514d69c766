import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { provisionCapFor, resolvePresetCwd } from "../../../core/config/local-paths.js";
import {
  MODEL_ROLE_DEFAULTS,
  resolveModelRef,
  resolveModelRoles,
  unknownModelWarnings,
} from "../../../core/config/models.js";
import {
  DEFAULT_RENDEZVOUS_URL,
  pairPageUrl,
  pairingSettings,
  rendezvousForOffer,
} from "../../../core/config/pairing.js";
import { resolveConfig } from "../../../core/config/resolve.js";
import type { SvcConfigFile } from "../../../core/config/schema.js";
import {
  grantableDelegation,
  messagingPolicy,
  resolvePromptInterrupt,
  resolveSpawnDefaults,
  roleForDepth,
} from "../../../core/config/spawn-defaults.js";

const eff = (file: SvcConfigFile) => resolveConfig(file, {}, {}, "/h").effective;

describe("spawn defaults", () => {
  const cfg = eff({
    defaults: {
      skills: ["a", "b"],
      options: { verbose: false, depth: 1, tone: "plain" },
      adapters: {
        claude: {
          skills: ["b", "c"],
          options: { depth: 2 },
          auth: { mode: "api-key", apiKey: "k", provider: "anthropic" },
        },
        bare: {},
      },
    },
  });

  it("options: defaults.options < adapter options < explicit", () => {
    expect(resolveSpawnDefaults(cfg, "claude", { options: { tone: "terse" } }).options).toEqual({
      verbose: false,
      depth: 2,
      tone: "terse",
    });
    expect(resolveSpawnDefaults(cfg, "other", {}).options).toEqual({ verbose: false, depth: 1, tone: "plain" });
  });

  it("skills: union of global and per-adapter; an explicit array replaces it whole", () => {
    expect(resolveSpawnDefaults(cfg, "claude", {}).skills).toEqual(["a", "b", "c"]);
    expect(resolveSpawnDefaults(cfg, "claude", { skills: ["z"] }).skills).toEqual(["z"]);
    expect(resolveSpawnDefaults(cfg, "claude", { skills: [] }).skills).toEqual([]);
  });

  it("auth per adapter, absent when the adapter has none", () => {
    expect(resolveSpawnDefaults(cfg, "claude", {}).auth).toEqual({
      mode: "api-key",
      apiKey: "k",
      provider: "anthropic",
    });
    expect(resolveSpawnDefaults(cfg, "bare", {})).not.toHaveProperty("auth");
    expect(resolveSpawnDefaults(eff({}), "x", {})).toEqual({ options: {}, skills: [] });
  });

  it("prompt interrupt: explicit wins, else defaults.agentPromptInterrupt (default false)", () => {
    expect(resolvePromptInterrupt(eff({}))).toBe(false);
    expect(resolvePromptInterrupt(eff({ defaults: { agentPromptInterrupt: true } }))).toBe(true);
    expect(resolvePromptInterrupt(eff({ defaults: { agentPromptInterrupt: true } }), false)).toBe(false);
    expect(resolvePromptInterrupt(eff({}), true)).toBe(true);
  });

  it("messaging policy defaults and overrides", () => {
    expect(messagingPolicy(eff({}))).toEqual({
      allowSiblings: false,
      agentInterrupt: "deny",
      pendingPromptStaleMinutes: 5,
    });
    expect(messagingPolicy(eff({ defaults: { messaging: { agentInterrupt: "allow" } } }))).toEqual({
      allowSiblings: false,
      agentInterrupt: "allow",
      pendingPromptStaleMinutes: 5,
    });
  });

  it("role for depth: executor at or above the cutoff (default 1)", () => {
    expect(roleForDepth(eff({}), 0)).toBe("supervisor");
    expect(roleForDepth(eff({}), 1)).toBe("executor");
    const c3 = eff({ defaults: { defaultRoleDepthCutoff: 3 } });
    expect([roleForDepth(c3, 2), roleForDepth(c3, 3)]).toEqual(["supervisor", "executor"]);
  });

  it("grantable delegation is capped by maxGrantableDelegation when set", () => {
    expect(grantableDelegation(eff({}), 5)).toBe(5);
    expect(grantableDelegation(eff({ defaults: { maxGrantableDelegation: 2 } }), 5)).toBe(2);
  });
});

describe("model roles", () => {
  it("built-in defaults for the four roles", () => {
    const t = resolveModelRoles({});
    expect(Object.keys(t).sort()).toEqual(["judge.session", "review.large", "review.pr", "review.small"]);
    for (const [role, d] of Object.entries(MODEL_ROLE_DEFAULTS))
      expect(t[role]).toEqual({ model: d.model, source: "default" });
  });

  it("precedence: run input > repository > config > default", () => {
    const config = { models: { "review.small": "c", "review.pr": "c", "review.large": "c" } };
    const t = resolveModelRoles(config, {
      repository: { "review.pr": "r", "review.large": "r" },
      run: { "review.large": { model: "x", route: "claude" } },
    });
    expect(t["review.small"]).toEqual({ model: "c", source: "config" });
    expect(t["review.pr"]).toEqual({ model: "r", source: "repository" });
    expect(t["review.large"]).toEqual({ model: "x", route: "claude", source: "run" });
    expect(t["judge.session"]!.source).toBe("default");
  });

  it("role: references resolve (chains too), cycles are an error", () => {
    const config = { models: { "review.pr": "role:review.large", custom: { model: "role:review.pr", profile: "p" } } };
    expect(resolveModelRef("role:custom", config)).toEqual({
      model: MODEL_ROLE_DEFAULTS["review.large"]!.model,
      profile: "p",
      role: "custom",
    });
    expect(resolveModelRef("gpt-5", config)).toEqual({ model: "gpt-5" });
    expect(() => resolveModelRef("role:nope", config)).toThrow(/not defined/);
    expect(() => resolveModelRoles({ models: { a: "role:b", b: "role:a" } })).toThrow(/cycle/);
  });

  it("unknown ids warn, catalog ids and role references do not", () => {
    expect(unknownModelWarnings("review.small", "my-model")).toHaveLength(1);
    expect(unknownModelWarnings("review.small", { model: "my-model" })).toHaveLength(1);
    expect(unknownModelWarnings("review.small", "claude-haiku-4-5")).toEqual([]);
    expect(unknownModelWarnings("review.small", "role:review.large")).toEqual([]);
  });
});

describe("pairing", () => {
  it('absent = hosted default, URL = that broker, "" = opt-out requiring --rendezvous', () => {
    // The hosted default is a placeholder in this build: refused at once, saying how to get a relay.
    expect(() => rendezvousForOffer(eff({}))).toThrow(/svc relay serve.*set pairing.rendezvous to the URL it prints/);
    expect(() => rendezvousForOffer(eff({}))).toThrow(DEFAULT_RENDEZVOUS_URL);
    expect(rendezvousForOffer(eff({ pairing: { rendezvous: "wss://b.example/v1" } }))).toBe("wss://b.example/v1");
    const optOut = eff({ pairing: { rendezvous: "" } });
    expect(() => rendezvousForOffer(optOut)).toThrow(/--rendezvous/);
    expect(rendezvousForOffer(optOut, "wss://flag.example/v1")).toBe("wss://flag.example/v1");
    // Without the relay's /v1 path, from the configuration or the flag: said, with the URL to use.
    expect(() => rendezvousForOffer(eff({ pairing: { rendezvous: "ws://127.0.0.1:7000" } }))).toThrow(
      "the relay URL must end in /v1, as `svc relay serve` prints it (pairing.rendezvous is ws://127.0.0.1:7000; try ws://127.0.0.1:7000/v1)",
    );
    expect(() => rendezvousForOffer(optOut, "wss://flag.example/")).toThrow(/--rendezvous is wss:\/\/flag.example\//);
    expect(pairingSettings(optOut)).toEqual({ autoconnect: false, pairPage: expect.any(String) });
  });

  it("pair page template", () => {
    expect(pairPageUrl("https://{fp}.pair.example.com/", "AB12")).toBe("https://ab12.pair.example.com/");
    expect(pairPageUrl("https://pair.example.com/", "AB12")).toBe("https://pair.example.com/");
  });
});

describe("local paths", () => {
  it("terminal preset cwd: relative against the CLI's cwd, ~/ expanded, absolute kept", () => {
    expect(resolvePresetCwd({ cwd: "var/logs" }, "/work/here")).toBe("/work/here/var/logs");
    expect(resolvePresetCwd({ cwd: "/abs" }, "/work/here")).toBe("/abs");
    expect(resolvePresetCwd({ cwd: "~/x" }, "/work/here")).toBe(join(homedir(), "x"));
    expect(resolvePresetCwd({}, "/work/here")).toBeUndefined();
  });

  it("per-repo caps: full path (with ~/) beats directory name", () => {
    const cfg = eff({ worktrees: { provisionConcurrencyByRepo: { "~/src/mono": 1, mono: 4, api: 3 } } });
    expect(provisionCapFor(cfg, join(homedir(), "src/mono"))).toBe(1);
    expect(provisionCapFor(cfg, "/elsewhere/mono")).toBe(4);
    expect(provisionCapFor(cfg, "/x/api")).toBe(3);
    expect(provisionCapFor(cfg, "/x/none")).toBeUndefined();
  });
});

describe("staticConfigService", () => {
  it("resolves a tree like the file-backed service", async () => {
    const { staticConfigService } = await import("../../../core/config/static-config-service.js");
    const svc = staticConfigService(
      { spawn: { attach: "on-request" } },
      { env: { SVC_SPAWN_DEDUPE: "on-request" }, home: "/h" },
    );
    expect(svc.current().effective.spawn).toEqual({ attach: "on-request", dedupe: "on-request" });
    expect(svc.current().effective.worktrees.root).toBe("/h/worktrees");
    expect(svc.current().sources["spawn.dedupe"]).toEqual({ kind: "env", name: "SVC_SPAWN_DEDUPE" });
    expect(() => staticConfigService({ daemon: { port: "x" } })).toThrow(/daemon\.port/);
  });
});
