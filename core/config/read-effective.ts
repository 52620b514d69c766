/**
 * The configuration of a CLI verb, through the same loader and resolver as the daemon:
 * `$SVC_HOME/config.json` (never created) with env and the verb's flags folded in.
 */
import type { ConfigSnapshot } from "./config-service.js";
import { configFilePath } from "./config-path.js";
import { FileConfigService } from "./file-config-service.js";
import type { ConfigFlags } from "./resolve.js";

/** Reads and resolves the configuration once. Throws `config_invalid` for a bad file, env value or `--profile`. */
export async function readEffectiveConfig(
  flags: ConfigFlags = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<ConfigSnapshot> {
  const svc = await FileConfigService.open(configFilePath(env), env, flags);
  return svc.current();
}
