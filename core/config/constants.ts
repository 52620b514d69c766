/**
 * Built-in endpoints used when the configuration leaves them absent. They are placeholders for
 * the hosted services (SPEC.md writes them as `{rendezvous_default_url}`, `{pair_page_default}`
 * and `{judge_default_url}`); a deployment overrides them in config.json.
 */

/** Hosted rendezvous broker used by `pair offer` when `pairing.rendezvous` is absent. */
export const DEFAULT_RENDEZVOUS_URL = "wss://rendezvous.svc.invalid/v1";

/** Hosted web pair page (one browser origin per daemon) when `pairing.pairPage` is absent. */
export const DEFAULT_PAIR_PAGE = "https://{fp}.pair.svc.invalid/";

/** External judge endpoint when `extJudge.baseUrl` is absent. */
export const DEFAULT_JUDGE_BASE_URL = "https://judge.svc.invalid/v1";
