/**
 * Creating `$SVC_HOME`. svc makes it 0700 (svc doctor warns about a home others may enter), so
 * whatever may be first to create it (npm, which would make it with the umask's 0755) calls this
 * first. An existing home keeps its mode: svc never changes what its owner chose.
 */
import { mkdirSync } from "node:fs";
import { svcHome } from "./paths.js";

/** Creates `$SVC_HOME` (and any missing parent) 0700 when it is missing; returns its path. */
export function ensureSvcHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = svcHome(env);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return home;
}
