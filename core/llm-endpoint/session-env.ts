/**
 * What a session is started with while the sidecar runs: for each provider the sidecar carries
 * (a route of it holds a key), the base-URL variable its SDKs read, pointed at the sidecar, and
 * the provider's key variables set to the session's own sidecar token; and every other variable
 * (inherited from the daemon, or from a spawn recipe's `env`) whose value is a key the sidecar
 * injects, overwritten with that token. The adapter's billing auth, when it is such a key, is
 * replaced by the token too. So no key the sidecar holds reaches a session, and a session's
 * token is worth nothing once its session ends.
 */
import type { SpawnAuth } from "../plugin-api/sessions.js";
import type { LlmProvider } from "./protocol.js";

/**
 * Base-URL variables per provider, and how the URL ends (OpenAI clients expect /v1 in it; Gemini
 * CLI and @google/genai read GOOGLE_GEMINI_BASE_URL and append /v1beta/… themselves).
 */
const BASE_URL_ENV: Readonly<Record<LlmProvider, { name: string; path: string }>> = {
  anthropic: { name: "ANTHROPIC_BASE_URL", path: "" },
  openai: { name: "OPENAI_BASE_URL", path: "/v1" },
  gemini: { name: "GOOGLE_GEMINI_BASE_URL", path: "" },
};

/** Key variables the providers' SDKs and agents read: each is set to the session's token. */
export const PROVIDER_TOKEN_ENV: Readonly<Record<LlmProvider, readonly string[]>> = {
  anthropic: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"],
  openai: ["OPENAI_API_KEY", "CODEX_API_KEY"],
  gemini: ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
};

export interface SessionEnvInput {
  port: number;
  token: string;
  routed: ReadonlySet<LlmProvider>;
  /** Every key value the sidecar injects upstream. */
  keys: ReadonlySet<string>;
  /** Environments the session's process may inherit from: the daemon's, the recipes'. */
  inherited: ReadonlyArray<Readonly<Record<string, string | undefined>>>;
  auth?: SpawnAuth;
}

export function sessionModelEnv(input: SessionEnvInput): { env: Record<string, string>; auth?: SpawnAuth } {
  const env: Record<string, string> = {};
  for (const source of input.inherited) {
    for (const [name, value] of Object.entries(source))
      if (value !== undefined && input.keys.has(value)) env[name] = input.token;
  }
  for (const provider of input.routed) {
    const base = BASE_URL_ENV[provider];
    env[base.name] = `http://127.0.0.1:${input.port}${base.path}`;
    for (const name of PROVIDER_TOKEN_ENV[provider]) env[name] = input.token;
  }
  const auth = input.auth;
  if (!auth) return { env };
  const swap = (v: string | undefined) => (v !== undefined && input.keys.has(v) ? input.token : v);
  const out: SpawnAuth = { ...auth };
  if (auth.apiKey !== undefined) out.apiKey = swap(auth.apiKey)!;
  if (auth.token !== undefined) out.token = swap(auth.token)!;
  return { env, auth: out };
}
