/**
 * A request to `/providers/<kind>/…` that no route serves, explained: the provider's package
 * failed to load (`plugin_load_failed`), or a package replaced the built-in that served the route.
 */
import { SvcError } from "../errors.js";
import { loadFailureMessage, replacedBuiltinMessage } from "./failure-message.js";
import type { PluginRegistry } from "./registry.js";

export function missingRouteProblem(registry: PluginRegistry, method: string, path: string): SvcError | undefined {
  const kind = /^\/providers\/([^/]+)(?:\/|$)/.exec(path)?.[1];
  if (!kind) return undefined;
  const failure = registry.failureOf("provider", kind);
  if (failure) return new SvcError("plugin_load_failed", loadFailureMessage("provider", kind, failure));
  const pkg = registry.replacerOf("provider", kind);
  return pkg ? new SvcError("not_found", replacedBuiltinMessage(method, path, kind, pkg)) : undefined;
}
