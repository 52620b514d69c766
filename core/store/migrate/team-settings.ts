/**
 * What `svc store migrate` and `svc doctor` need of the team store settings, over the daemon's
 * own readers (core/store/select.ts, core/store/postgres/secret-key.ts): the team key as the
 * configuration names it, and a `--to` URL refused when it carries a password.
 */
import type { ConfigSnapshot } from "../../config/config-service.js";
import { formatSource } from "../../config/resolve.js";
import { SvcError } from "../../errors.js";
import { loadTeamKey } from "../postgres/secret-key.js";

/** The team key (`SVC_STORE_KEY`, else the key file of `SVC_STORE_KEY_FILE` / config `store.keyFile`). */
export function teamKeyOf(
  config: Pick<ConfigSnapshot, "effective" | "sources">,
  env: NodeJS.ProcessEnv,
  home: string,
): Promise<Buffer> {
  const source = config.sources["store.keyFile"];
  return loadTeamKey({
    env,
    home,
    keyFile: config.effective.store?.keyFile,
    keyFileFrom: source?.kind === "env" ? formatSource(source) : "config.json store.keyFile",
  });
}

/** A postgres URL given on the command line must not carry a password: the process list shows argv. */
export function refusePasswordInArgv(url: string, flag: string): void {
  if (URL.canParse(url) ? new URL(url).password === "" : !/^[^:/]+:\/\/[^/?#@]*:[^/?#@]*@/.test(url)) return;
  throw new SvcError(
    "store_url_invalid",
    `${flag} holds a password, which every user of this machine can read in the process list: drop it from the URL and give it through PGPASSWORD or ~/.pgpass, or put the whole URL in SVC_STORE_URL`,
  );
}
