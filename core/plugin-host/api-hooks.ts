/**
 * Node module-resolution hooks (registered by plugin-api-provider.ts) that give every plugin the
 * host's own plugin API, whatever the plugin's install path: `@svc/plugin-api` and the older
 * `svc/plugin-api` resolve to this svc's `core/plugin-api/index.js`, as VS Code provides `vscode`
 * to extensions. A plugin never needs its own copy of svc (or a peer dependency on the name
 * `svc`, which the public registry gives to an unrelated package). Runs on Node's loader thread.
 */

interface InitData {
  apiUrl: string;
}

interface ResolveContext {
  parentURL?: string;
}

type NextResolve = (specifier: string, context: ResolveContext) => Promise<{ url: string }>;

/** The specifiers the host answers. */
export const PLUGIN_API_SPECIFIERS = ["@svc/plugin-api", "svc/plugin-api", "@svc/svc/plugin-api"];

let apiUrl: string | undefined;

export function initialize(data: InitData): void {
  apiUrl = data.apiUrl;
}

export async function resolve(
  specifier: string,
  context: ResolveContext,
  nextResolve: NextResolve,
): Promise<{ url: string; shortCircuit?: boolean }> {
  if (apiUrl !== undefined && PLUGIN_API_SPECIFIERS.includes(specifier)) return { url: apiUrl, shortCircuit: true };
  return nextResolve(specifier, context);
}
