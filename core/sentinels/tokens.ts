/** Injection tokens of the sentinel engine's parts (the engine itself is SENTINELS in core/tokens.ts). */
import { token } from "../tokens.js";

export const SENTINEL_STORE = token<import("./record-store.js").SentinelRecordStore>("sentinel-store");
export const SENTINEL_DEDUP = token<import("./dedup.js").SentinelDedup>("sentinel-dedup");
export const SENTINEL_PLUGINS = token<import("./plugin-access.js").SentinelPlugins>("sentinel-plugins");
/** Optional: the periodic expiry tick (tests register a ManualTicker). */
export const SENTINEL_TICKER = token<import("./ticker.js").Ticker>("sentinel-ticker");
