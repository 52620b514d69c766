/**
 * What every surface (REST, MCP, CLI) answers when it needs a plugin that is not there because
 * its package failed, or because a package replaced the built-in that served it: which package,
 * which phase, and what to do.
 */
/** `plugin_load_failed`'s message for a plugin whose package failed to load (before setup). */
export function loadFailureMessage(
  type: string,
  kind: string,
  f: { package: string; phase: string; error: string },
): string {
  return `${type} plugin "${kind}" from package ${f.package} failed to load (phase ${f.phase}): ${f.error}; fix or upgrade the package, or remove it with svc adapters rm ${f.package}, then restart the daemon; svc adapters ls --load shows the load report`;
}

/** Why a route a built-in provider serves is missing: the package that replaced that built-in. */
export function replacedBuiltinMessage(method: string, path: string, kind: string, pkg: string): string {
  return `no route ${method} ${path}: the built-in provider ${kind} serves it, but package ${pkg} replaces it (config adapters) and does not; remove it with svc adapters rm ${pkg}, then restart the daemon`;
}
