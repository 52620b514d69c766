/**
 * Registers api-hooks.ts once per process, before the first plugin is imported: from then on
 * `import … from "@svc/plugin-api"` (or `svc/plugin-api`) in any plugin resolves to this host's
 * plugin API. Only the plugin loader calls it, and only for a package's plugins (the built-in ones
 * import the API by path), so `svc --version`, verbs that load no plugin and a daemon with only the
 * built-in plugins pay nothing (the hooks run on a loader thread with its own V8 heap). Running from the TypeScript sources (the test runner), where no built API exists
 * beside this file, it registers nothing (vitest resolves in-process plugin imports itself; see
 * test/core/plugin-host/sandbox.ts).
 */
import { existsSync } from "node:fs";
import { register } from "node:module";
import { fileURLToPath } from "node:url";

let registered = false;

export function providePluginApi(): void {
  if (registered) return;
  registered = true;
  const apiUrl = new URL("../plugin-api/index.js", import.meta.url);
  const hooksUrl = new URL("./api-hooks.js", import.meta.url);
  if (!existsSync(fileURLToPath(apiUrl)) || !existsSync(fileURLToPath(hooksUrl))) return;
  register(hooksUrl.href, { data: { apiUrl: apiUrl.href } });
}
