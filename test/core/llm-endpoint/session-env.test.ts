import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sessionModelEnv } from "../../../core/llm-endpoint/session-env.js";
import type { LlmProvider } from "../../../core/llm-endpoint/protocol.js";

const TOKEN = "svc_llm_" + "ab".repeat(24);
const name = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,12}$/);
const value = fc.string({ minLength: 1, maxLength: 12 });

describe("sessionModelEnv", () => {
  it("property: whatever the inherited environments and auth hold, no key the sidecar injects survives in what the session gets", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(value, { minLength: 1, maxLength: 4 }),
        fc.array(fc.dictionary(name, value), { maxLength: 3 }),
        fc.subarray(["anthropic", "openai", "gemini"] as LlmProvider[]),
        fc.record({ apiKey: fc.option(value, { nil: undefined }), token: fc.option(value, { nil: undefined }) }),
        (keys, envs, routed, auth) => {
          // Some inherited variables hold keys.
          const inherited = envs.map((e, i) => ({ ...e, [`KEYED_${i}`]: keys[i % keys.length]! }));
          const out = sessionModelEnv({
            port: 4242,
            token: TOKEN,
            routed: new Set(routed),
            keys: new Set(keys),
            inherited,
            auth: { ...auth, apiKey: auth.apiKey ?? keys[0] },
          });
          for (const e of inherited) {
            const merged = { ...e, ...out.env };
            for (const v of Object.values(merged)) expect(keys).not.toContain(v);
          }
          expect(keys).not.toContain(out.auth?.apiKey);
          expect(keys).not.toContain(out.auth?.token);
        },
      ),
    );
  });

  it("a routed gemini gets GOOGLE_GEMINI_BASE_URL (Gemini CLI and @google/genai append /v1beta) and both its key variables", () => {
    const out = sessionModelEnv({
      port: 4242,
      token: TOKEN,
      routed: new Set<LlmProvider>(["gemini"]),
      keys: new Set(),
      inherited: [],
    });
    expect(out.env).toEqual({
      GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:4242",
      GEMINI_API_KEY: TOKEN,
      GOOGLE_API_KEY: TOKEN,
    });
  });

  it("points each routed provider's SDK variables at the sidecar with the token, and leaves the others alone", () => {
    const out = sessionModelEnv({
      port: 4242,
      token: TOKEN,
      routed: new Set<LlmProvider>(["openai"]),
      keys: new Set(["k1"]),
      inherited: [{ GEMINI_API_KEY: "g", HOME: "/h" }],
    });
    expect(out.env).toEqual({
      OPENAI_BASE_URL: "http://127.0.0.1:4242/v1",
      OPENAI_API_KEY: TOKEN,
      CODEX_API_KEY: TOKEN,
    });
    const both = sessionModelEnv({
      port: 1,
      token: TOKEN,
      routed: new Set<LlmProvider>(["anthropic", "openai"]),
      keys: new Set(),
      inherited: [],
    });
    expect(both.env.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:1");
    expect(both.env.ANTHROPIC_AUTH_TOKEN).toBe(TOKEN);
  });

  it("keeps an auth key the sidecar does not hold (a provider it does not carry), and the auth's other fields", () => {
    const out = sessionModelEnv({
      port: 1,
      token: TOKEN,
      routed: new Set(),
      keys: new Set(["k1"]),
      inherited: [],
      auth: { mode: "api-key", provider: "google", apiKey: "gemini-key" },
    });
    expect(out.auth).toEqual({ mode: "api-key", provider: "google", apiKey: "gemini-key" });
    const swapped = sessionModelEnv({
      port: 1,
      token: TOKEN,
      routed: new Set(),
      keys: new Set(["k1"]),
      inherited: [],
      auth: { mode: "subscription", token: "k1" },
    });
    expect(swapped.auth).toEqual({ mode: "subscription", token: TOKEN });
  });
});
