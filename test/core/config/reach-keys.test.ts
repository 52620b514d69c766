import { describe, expect, it } from "vitest";
import { parseKey } from "../../../core/config/dotted-path.js";
import { isReachKey } from "../../../core/config/reach-keys.js";

describe("isReachKey: which config_set keys need the bearer token", () => {
  it.each([
    "daemon.authToken",
    "daemon.bind",
    "daemon.port",
    "daemon.allowedOrigins",
    "daemon.allowedHosts",
    "daemon",
    "webhooks.allowSubnets",
    "webhooks",
    "adapters",
    "acpAgents.evil",
    "acpAgents.evil.bin",
    "terminalPresets.x.argv",
    "tunnel.host",
    "tunnel",
    "pairing.rendezvous",
    "profiles.work.daemon.bind",
    "activeProfile",
    "profileAliases.fast",
    "corpusPresetPackages",
    "extJudge.baseUrl",
    "extJudge",
    "features.llmEndpoint",
    "features",
    "defaults.adapters.gemini.auth",
    "defaults.adapters.gemini.auth.apiKey",
    "defaults.adapters.gemini",
    "defaults.adapters",
    "defaults",
    "defaults.traceEndpoint",
    "defaults.extTracing",
    "defaults.traceRedactor",
  ])("%s widens reach", (key) => {
    expect(isReachKey(parseKey(key))).toBe(true);
  });

  it.each([
    "models.review.small",
    "models",
    "defaults.skills",
    "defaults.options.x",
    "defaults.adapters.gemini.skills",
    "defaults.messaging.allowSiblings",
    "daemon.turnStallAfterMs",
    "sessions.attentionDelaySec",
    "spawn.attach",
    "worktrees.isolation",
    "worktrees.provisionConcurrency",
    "features.pty",
    "extJudge.model",
  ])("%s does not", (key) => {
    expect(isReachKey(parseKey(key))).toBe(false);
  });
});
