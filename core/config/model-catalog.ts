/**
 * A small built-in catalog of model ids the tool knows about. It only informs: setting a model
 * role to an id outside the catalog warns and is accepted.
 */
export interface CatalogModel {
  id: string;
  provider: string;
  description: string;
}

export const MODEL_CATALOG: readonly CatalogModel[] = [
  { id: "claude-haiku-4-5", provider: "anthropic", description: "small, fast reviewer" },
  { id: "claude-sonnet-4-5", provider: "anthropic", description: "balanced reviewer and judge" },
  { id: "claude-opus-4-5", provider: "anthropic", description: "large reviewer" },
  { id: "gpt-5", provider: "openai", description: "large general model" },
  { id: "gpt-5-mini", provider: "openai", description: "small general model" },
  { id: "gemini-2.5-pro", provider: "google", description: "large general model" },
  { id: "gemini-2.5-flash", provider: "google", description: "small, fast general model" },
  { id: "ext-latest", provider: "ext-judge", description: "external judge backend's current model" },
];

export function isKnownModel(id: string): boolean {
  return MODEL_CATALOG.some((m) => m.id === id);
}

/**
 * The adapter slug that runs each provider's models (an ACP catalog agent), used by run-swarm to
 * pick an adapter from a model when a step names none. A provider without an entry (ext-judge)
 * runs under no adapter.
 */
export const PROVIDER_ADAPTERS: Readonly<Record<string, string>> = { anthropic: "claude", openai: "codex", google: "gemini" };

/** The catalog's adapter for a model id: its provider's adapter, or undefined. */
export function catalogAdapterFor(model: string): { adapter: string; provider: string } | undefined {
  const entry = MODEL_CATALOG.find((m) => m.id === model);
  const adapter = entry ? PROVIDER_ADAPTERS[entry.provider] : undefined;
  return entry && adapter ? { adapter, provider: entry.provider } : undefined;
}
