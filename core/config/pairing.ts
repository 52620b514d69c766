/**
 * The `pairing` section: rendezvous broker (absent = hosted default, URL = that broker,
 * `""` = explicit opt-out), boot autoconnect, and the web pair page template.
 */
import { SvcError } from "../errors.js";
import type { EffectiveConfig } from "./config-service.js";

export { DEFAULT_PAIR_PAGE, DEFAULT_RENDEZVOUS_URL } from "./constants.js";
export { isPairPage, pairPageUrl } from "./pair-page.js";

export interface PairingSettings {
  /** The broker to use; `undefined` when the configuration opted out (`""`). */
  rendezvous?: string;
  autoconnect: boolean;
  pairPage: string;
}

export function pairingSettings(cfg: EffectiveConfig): PairingSettings {
  const p = cfg.pairing;
  return {
    ...(p.rendezvous !== "" ? { rendezvous: p.rendezvous } : {}),
    autoconnect: p.autoconnect,
    pairPage: p.pairPage,
  };
}

/**
 * The broker a `pair offer` uses: `--rendezvous` when given, else the configured (or hosted
 * default) broker. After an explicit opt-out (`pairing.rendezvous: ""`) the flag is required.
 */
export function rendezvousForOffer(cfg: EffectiveConfig, flag?: string): string {
  if (flag !== undefined && flag !== "") return flag;
  const configured = cfg.pairing.rendezvous;
  if (configured === "") {
    throw new SvcError(
      "usage",
      `pairing.rendezvous is "" (explicit opt-out from the hosted broker): pass --rendezvous <wss://url> to pair offer`,
    );
  }
  return configured;
}
