/**
 * Which tunnel the daemon opens at start, checked before anything of the remote room loads:
 * `--connect`, or `tunnel.host` with `tunnel.autoconnect`; the host token from `tunnel.token`, else
 * credentials.json's `tunnel/token`; `tunnel.e2e` refused without `tunnel.token`.
 */
import { SvcError } from "../../errors.js";
import type { CredentialStore } from "../../plugin-api/context.js";
import type { ConfigSnapshot } from "../../config/config-service.js";

export interface TunnelSettings {
  url: string;
  token: string;
  e2e: boolean;
}

export const E2E_NEEDS_TOKEN = "tunnel.e2e: true requires tunnel.token to be set (set the token first)";

/** The daemon's host token: `tunnel.token`, else credentials.json's `tunnel/token`. */
export async function tunnelHostToken(snap: ConfigSnapshot, credentials: CredentialStore): Promise<string | undefined> {
  return snap.effective.tunnel.token ?? (await credentials.get("tunnel", "token"));
}

/** The tunnel to open at start, if any: `--connect`, or `tunnel.host` with `tunnel.autoconnect`. */
export async function tunnelSettings(
  snap: ConfigSnapshot,
  credentials: CredentialStore,
): Promise<TunnelSettings | undefined> {
  const t = snap.effective.tunnel;
  const byFlag = snap.sources["tunnel.host"]?.kind === "flag";
  if (!t.host || !(byFlag || t.autoconnect)) return undefined;
  if (t.e2e && !t.token) throw new SvcError("config_invalid", E2E_NEEDS_TOKEN);
  const token = await tunnelHostToken(snap, credentials);
  if (!token)
    throw new SvcError(
      "config_invalid",
      `the tunnel to ${new URL(t.host).host} needs its host token: set tunnel.token, or store one in credentials.json as tunnel/token`,
    );
  const u = new URL(t.host);
  if (!u.pathname.endsWith("/tunnel"))
    u.pathname = u.pathname.replace(/\/+$/, "") + (u.pathname.includes("/v1") ? "/tunnel" : "/v1/tunnel");
  return { url: u.toString(), token, e2e: t.e2e === true };
}
