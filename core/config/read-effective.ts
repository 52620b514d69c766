/**
 * The configuration of a CLI verb, through the same loader and resolver as the daemon:
 * `$SVC_HOME/config.json` (never created) with env and the verb's flags folded in.
 */
import { homeFile, svcHome } from "../storage/paths.js";
import type { ConfigSnapshot } from "./config-service.js";
import { FileConfigService } from "./file-config-service.js";
import type { ConfigFlags } from "./resolve.js";

/** Reads and resolves the configuration once. Throws `config_invalid` for a bad file, env value or `--profile`. */
export async function readEffectiveConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Promise<ConfigSnapshot> {
  const svc = await FileConfigService.open(homeFile(svcHome(env), "config"), env, flags);
  return svc.current();
}
