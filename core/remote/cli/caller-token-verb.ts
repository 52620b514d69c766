/**
 * `svc tunnel caller-token`: prints the caller token of this daemon's tunnel, the one credential
 * to hand to callers (they set it as SVC_TUNNEL_TOKEN). Read locally from `tunnel.token`, else
 * credentials.json's `tunnel/token`, with the file owner's rights; the host token is never printed.
 */
import "reflect-metadata";
import { SvcError } from "../../errors.js";
import { println, warn } from "../../cli/output.js";
import { readEffectiveConfig } from "../../config/read-effective.js";
import { FileCredentialStore } from "../../storage/credentials.js";
import { svcHome } from "../../storage/paths.js";
import { callerTokenFor } from "../tunnel/caller-token.js";
import { tunnelHostToken } from "../tunnel/settings.js";

export async function printCallerToken(o: { profile?: string }): Promise<void> {
  const snap = await readEffectiveConfig(o.profile !== undefined ? { profile: o.profile } : {});
  for (const w of snap.warnings) warn(w);
  const host = await tunnelHostToken(snap, new FileCredentialStore(svcHome()));
  if (!host)
    throw new SvcError(
      "config_invalid",
      "this daemon has no tunnel host token, so its tunnel has no caller token yet: set tunnel.token, or store one in credentials.json as tunnel/token (see docs/remote.md)",
    );
  println(callerTokenFor(host));
}
