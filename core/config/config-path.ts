/**
 * Where the CLI's config.json is. Its own module, importing only the path rules, so a verb that
 * needs just the path (`svc config path`) does not load the schema, loader and resolver.
 */
import { homeFile, svcHome } from "../storage/paths.js";

/** `$SVC_HOME/config.json` (default `~/.svc/config.json`). */
export function configFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return homeFile(svcHome(env), "config");
}
