/**
 * An in-memory {@link ConfigService} over a given config tree, resolved by the same resolver as
 * the file-backed one. For tests and tools that need a configuration without a file.
 */
import { join } from "node:path";
import type { ConfigService, ConfigSnapshot } from "./config-service.js";
import { validateConfigTree } from "./load.js";
import { resolveConfig, type ConfigFlags } from "./resolve.js";

export interface StaticConfigOptions {
  env?: NodeJS.ProcessEnv;
  flags?: ConfigFlags;
  /** `$SVC_HOME` for home-relative defaults; default `/nonexistent-svc-home`. */
  home?: string;
}

/** A ConfigService whose file content is `tree` (validated like config.json); `reload` keeps it. */
export function staticConfigService(
  tree: Record<string, unknown> = {},
  options: StaticConfigOptions = {},
): ConfigService {
  const home = options.home ?? "/nonexistent-svc-home";
  const path = join(home, "config.json");
  const file = validateConfigTree(path, tree);
  const { effective, warnings, sources, profile } = resolveConfig(
    file.config,
    options.env ?? {},
    options.flags ?? {},
    home,
  );
  const snapshot: ConfigSnapshot = {
    raw: file.raw,
    effective,
    warnings: [...file.warnings, ...warnings],
    sources,
    path,
    exists: true,
    ...(profile !== undefined ? { profile } : {}),
  };
  return {
    current: () => snapshot,
    reload: async () => ({ ok: true, snapshot }),
    onChange: () => () => undefined,
  };
}
