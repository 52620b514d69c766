/**
 * What the sidecar is told from config: its routes (built-in `anthropic`, `openai` and `gemini`, and
 * `llmEndpoint.upstreams` over them), each with the key it injects; the model roles with their
 * `route` and `profile` applied; the budgets and the upstream timeout.
 *
 * A route's key comes from, in order: `defaults.adapters.<slug>.auth` (apiKey, else token) of the
 * route's `keyFrom` (default: the provider's catalog adapter, claude, codex or gemini); credentials.json
 * `llm-endpoint/<route>`; the daemon's own environment (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
 * `GEMINI_API_KEY`).
 * A role's `profile` names an adapter slug whose auth is used for that role's calls instead.
 */
import type { EffectiveConfig } from "../config/config-service.js";
import { PROVIDER_ADAPTERS } from "../config/model-catalog.js";
import { resolveRoleTable } from "../config/models.js";
import type { CredentialStore } from "../plugin-api/context.js";
import { judgeSettings } from "../steward/judge-config.js";
import type { BudgetSpec, LlmProvider, RoleSpec, RouteSpec } from "./protocol.js";

/** The credentials.json namespace of route keys (`llm-endpoint/<route>`). */
export const CREDENTIAL_NAMESPACE = "llm-endpoint";

/** The default port of the sidecar (the daemon's is 18790). */
export const DEFAULT_PORT = 18792;

/** The built-in routes, which `llmEndpoint.upstreams` entries of the same name replace. */
export const BUILTIN_ROUTES: Readonly<Record<string, { provider: LlmProvider; baseUrl: string; models: string[] }>> = {
  anthropic: { provider: "anthropic", baseUrl: "https://api.anthropic.com", models: ["claude-*"] },
  openai: {
    provider: "openai",
    baseUrl: "https://api.openai.com/v1",
    models: ["gpt-*", "o1*", "o3*", "o4*", "codex-*", "chatgpt-*"],
  },
  gemini: { provider: "gemini", baseUrl: "https://generativelanguage.googleapis.com", models: ["gemini-*"] },
};

/**
 * The session steward's judge as a route (`extJudge.baseUrl`, its key, the chat-completions API)
 * and the role the steward names as its model, which resolves to the judge's model on that route
 * (or on the route the `judge.session` role names). Sessions never call it: it matches no model
 * pattern and does not make the openai API "routed" for them.
 */
export const JUDGE_ROUTE = "ext-judge";
export const JUDGE_CALL_ROLE = "svc.steward-judge";

/** The environment variable of each provider's key in the daemon's own environment (the last source). */
export const PROVIDER_KEY_ENV: Readonly<Record<LlmProvider, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  gemini: "GEMINI_API_KEY",
};

export interface SidecarSettings {
  routes: RouteSpec[];
  roles: RoleSpec[];
  budgets: BudgetSpec;
  upstreamTimeoutMs: number;
  port: number;
}

type Key = NonNullable<RouteSpec["key"]>;

function adapterFor(provider: LlmProvider): string {
  return PROVIDER_ADAPTERS[provider]!;
}

function authKey(cfg: EffectiveConfig, slug: string): Key | undefined {
  const auth = cfg.defaults.adapters?.[slug]?.auth;
  if (auth?.apiKey) return { kind: "apiKey", value: auth.apiKey, from: `defaults.adapters.${slug}.auth.apiKey` };
  if (auth?.token) return { kind: "token", value: auth.token, from: `defaults.adapters.${slug}.auth.token` };
  return undefined;
}

/** Resolves config into what the sidecar is told; reads credentials.json once. */
export async function sidecarSettings(
  cfg: EffectiveConfig,
  credentials: CredentialStore,
  env: NodeJS.ProcessEnv,
): Promise<SidecarSettings> {
  const section = cfg.llmEndpoint ?? {};
  const entries = { ...BUILTIN_ROUTES, ...(section.upstreams ?? {}) } as Record<
    string,
    { provider: LlmProvider; baseUrl: string; models?: string[]; keyFrom?: string }
  >;
  const routes: RouteSpec[] = [];
  for (const [name, u] of Object.entries(entries)) {
    const slug = u.keyFrom ?? adapterFor(u.provider);
    const stored = await credentials.get(CREDENTIAL_NAMESPACE, name).catch(() => undefined);
    const fromEnv = BUILTIN_ROUTES[name] && !u.keyFrom ? env[PROVIDER_KEY_ENV[u.provider]] : undefined;
    const key: Key | undefined =
      authKey(cfg, slug) ??
      (stored
        ? { kind: "apiKey", value: stored, from: `credentials.json ${CREDENTIAL_NAMESPACE}/${name}` }
        : undefined) ??
      (fromEnv ? { kind: "apiKey", value: fromEnv, from: `the daemon's ${PROVIDER_KEY_ENV[u.provider]}` } : undefined);
    routes.push({
      name,
      provider: u.provider,
      baseUrl: u.baseUrl.replace(/\/+$/, ""),
      models: u.models ?? [],
      keyFrom: slug,
      ...(key ? { key } : {}),
    });
  }
  const roles: RoleSpec[] = [];
  for (const [role, r] of Object.entries(resolveRoleTable(cfg).roles)) {
    const key = r.profile ? authKey(cfg, r.profile) : undefined;
    roles.push({ role, model: r.model, ...(r.route ? { route: r.route } : {}), ...(key ? { key } : {}) });
  }
  const judge = judgeSettings({ effective: cfg, sources: {} });
  if (!entries[JUDGE_ROUTE] && judge.key)
    routes.push({
      name: JUDGE_ROUTE,
      provider: "openai",
      baseUrl: judge.baseUrl,
      models: [],
      keyFrom: "extJudge",
      key: { kind: "apiKey", value: judge.key.value, from: "extJudge.apiKey (or EXT_JUDGE_API_KEY)" },
    });
  const judgeKey = judge.profile ? authKey(cfg, judge.profile) : undefined;
  roles.push({
    role: JUDGE_CALL_ROLE,
    model: judge.model,
    route: judge.route ?? JUDGE_ROUTE,
    ...(judgeKey ? { key: judgeKey } : {}),
  });
  return {
    routes,
    roles,
    budgets: { ...(section.budgets ?? {}) },
    upstreamTimeoutMs: Math.round((section.upstreamTimeoutSec ?? 600) * 1000),
    port: section.port ?? DEFAULT_PORT,
  };
}

/** The providers whose traffic the sidecar carries: a route of that provider holds a key. */
export function routedProviders(routes: readonly RouteSpec[]): Set<LlmProvider> {
  return new Set(routes.filter((r) => r.key && r.name !== JUDGE_ROUTE).map((r) => r.provider));
}

/** Every key value the sidecar injects: none of them may reach a session. */
export function injectedKeys(s: Pick<SidecarSettings, "routes" | "roles">): Set<string> {
  return new Set([...s.routes, ...s.roles].flatMap((r) => (r.key ? [r.key.value] : [])));
}
