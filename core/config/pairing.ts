/**
 * The `pairing` section: rendezvous broker (absent = hosted default, URL = that broker,
 * `""` = explicit opt-out), boot autoconnect, and the web pair page template.
 */
import { SvcError } from "../errors.js";
import type { EffectiveConfig } from "./config-service.js";
import { DEFAULT_RENDEZVOUS_URL } from "./constants.js";

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

/** What to do when there is no relay to pair through (`svc relay serve` prints the URL to use). */
const RUN_A_RELAY =
  "run `svc relay serve` on a machine both ends can reach and set pairing.rendezvous to the URL it prints " +
  "(svc config set pairing.rendezvous ws://<host>:<port>/v1), or pass --rendezvous <that URL>";

/**
 * The broker a `pair offer` uses: `--rendezvous` when given, else the configured (or hosted
 * default) broker. After an explicit opt-out (`pairing.rendezvous: ""`) the flag is required.
 * Refused at once, each saying what to do: the hosted default while it is a placeholder (a `.invalid`
 * host, as in this build), and a URL without the relay's `/v1` path (the relay would close the
 * connection with no reason, "code 1006").
 */
export function rendezvousForOffer(cfg: EffectiveConfig, flag?: string): string {
  const configured = cfg.pairing.rendezvous;
  const fromFlag = flag !== undefined && flag !== "";
  if (!fromFlag && configured === "") {
    throw new SvcError(
      "usage",
      `pairing.rendezvous is "" (explicit opt-out from the hosted broker): pass --rendezvous <wss://url> to pair offer`,
    );
  }
  const url = fromFlag ? flag : configured;
  const where = fromFlag ? "--rendezvous" : "pairing.rendezvous";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SvcError("usage", `${where} is not a URL (got ${JSON.stringify(url)}): ${RUN_A_RELAY}`);
  }
  if (parsed.hostname.endsWith(".invalid")) {
    throw new SvcError(
      "usage",
      fromFlag || url !== DEFAULT_RENDEZVOUS_URL
        ? `${where} names ${parsed.host}, a placeholder host that never resolves: ${RUN_A_RELAY}`
        : `no relay to pair through: pairing.rendezvous is not set, and this build's hosted default (${url}) is a placeholder. To pair, ${RUN_A_RELAY}`,
    );
  }
  if (!/\/v1\/*$/.test(parsed.pathname)) {
    throw new SvcError(
      "usage",
      `the relay URL must end in /v1, as \`svc relay serve\` prints it (${where} is ${url}; try ${parsed.protocol}//${parsed.host}/v1)`,
    );
  }
  return url;
}
