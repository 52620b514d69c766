/**
 * `svc serve --auth-token <token>` and `--auth-token-file <path>`: the daemon's stable bearer
 * token for this run. `--auth-token` stays (SPEC.md names it) but puts the token where `ps` shows
 * it to every user of the machine, so using it prints a warning naming the safe ways.
 */
import type { ConfigFlags } from "../config/resolve.js";
import { usageError, warn } from "./output.js";
import { readSecretFile } from "./secret-input.js";

export const AUTH_TOKEN_ON_ARGV_WARNING =
  "--auth-token puts the token on the command line, where ps shows it to every user of this machine; " +
  "keep it in daemon.authToken in config.json (0600: svc config set daemon.authToken < file) or pass --auth-token-file <path> instead";

/** The resolver flags for the token given to `svc serve`; warns on stderr when it came on the command line. */
export async function authTokenFlags(opts: {
  authToken?: string;
  authTokenFile?: string;
}): Promise<Pick<ConfigFlags, "authToken" | "authTokenFromFile">> {
  if (opts.authToken !== undefined && opts.authTokenFile !== undefined)
    throw usageError("give --auth-token or --auth-token-file, not both");
  if (opts.authTokenFile !== undefined)
    return { authTokenFromFile: await readSecretFile("--auth-token-file", opts.authTokenFile) };
  if (opts.authToken === undefined) return {};
  warn(AUTH_TOKEN_ON_ARGV_WARNING);
  return { authToken: opts.authToken };
}
