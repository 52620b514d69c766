/**
 * A small built-in catalog of model ids the tool knows about. It only informs: setting a model
 * role to an id outside the catalog warns and is accepted.
 */
export interface CatalogModel {
  id: string;
  provider: string;
  description: string;
  /** The model's context window in tokens; absent when unknown (the context policy is then off). */
  contextWindow?: number;
}

export const MODEL_CATALOG: readonly CatalogModel[] = [
  { id: "claude-haiku-4-5", provider: "anthropic", description: "small, fast reviewer", contextWindow: 200_000 },
  {
    id: "claude-sonnet-4-5",
    provider: "anthropic",
    description: "balanced reviewer and judge",
    contextWindow: 200_000,
  },
  { id: "claude-opus-4-5", provider: "anthropic", description: "large reviewer", contextWindow: 200_000 },
  { id: "gpt-5", provider: "openai", description: "large general model", contextWindow: 400_000 },
  { id: "gpt-5-mini", provider: "openai", description: "small general model", contextWindow: 400_000 },
  { id: "gemini-2.5-pro", provider: "gemini", description: "large general model", contextWindow: 1_048_576 },
  { id: "gemini-2.5-flash", provider: "gemini", description: "small, fast general model", contextWindow: 1_048_576 },
  { id: "ext-latest", provider: "ext-judge", description: "external judge backend's current model" },
];

/**
 * A model's context window in tokens: the catalog entry of `model`, or of the catalog id that a
 * dated or suffixed id extends (`claude-sonnet-4-5-20250929`, `claude-sonnet-4-5@20250929`: the
 * longest catalog id followed by `-` or `@`). Undefined for a model the catalog does not size.
 */
export function contextWindowOf(model: string): number | undefined {
  const exact = MODEL_CATALOG.find((m) => m.id === model);
  if (exact) return exact.contextWindow;
  const base = MODEL_CATALOG.filter(
    (m) => model.startsWith(m.id) && (model[m.id.length] === "-" || model[m.id.length] === "@"),
  ).sort((a, b) => b.id.length - a.id.length)[0];
  return base?.contextWindow;
}

export function isKnownModel(id: string): boolean {
  return MODEL_CATALOG.some((m) => m.id === id);
}

/**
 * The adapter slug that runs each provider's models (an ACP catalog agent), used by run-swarm to
 * pick an adapter from a model when a step names none. A provider without an entry (ext-judge)
 * runs under no adapter.
 */
export const PROVIDER_ADAPTERS: Readonly<Record<string, string>> = {
  anthropic: "claude",
  openai: "codex",
  gemini: "gemini",
};

/** The catalog's adapter for a model id: its provider's adapter, or undefined. */
export function catalogAdapterFor(model: string): { adapter: string; provider: string } | undefined {
  const entry = MODEL_CATALOG.find((m) => m.id === model);
  const adapter = entry ? PROVIDER_ADAPTERS[entry.provider] : undefined;
  return entry && adapter ? { adapter, provider: entry.provider } : undefined;
}
