/**
 * Configuration keys that widen who can reach the daemon or what it reaches: changing one through
 * a daemon surface needs the bearer token (operation `config.write-reach` in
 * core/daemon/authorization.ts). The CLI's `config set` writes the file itself, as its owner.
 */

/** Whole top-level sections that decide reach (packages loaded, commands run, peers, tunnels). */
const REACH_SECTIONS = new Set([
  "adapters",
  "acpAgents",
  "terminalPresets",
  "tunnel",
  "pairing",
  "profiles",
  "activeProfile",
  "profileAliases",
  "corpusPresetPackages",
  "webhooks",
]);

/** Leaves (and their parents) of other sections that decide reach. */
const REACH_PATHS: readonly (readonly string[])[] = [
  ["daemon", "authToken"],
  ["daemon", "bind"],
  ["daemon", "port"],
  ["daemon", "allowedOrigins"],
  ["daemon", "allowedHosts"],
  ["features", "llmEndpoint"],
  // Where the sidecar sends model calls with which key, and the port it binds.
  ["llmEndpoint", "upstreams"],
  ["llmEndpoint", "port"],
  // Where the judge's API key is sent, and the key itself; extJudge.model widens nothing.
  ["extJudge", "baseUrl"],
  ["extJudge", "apiKey"],
  // Where traced sessions' spans are sent, whether they are sent, and how much of the content
  // leaves with them (and with judge requests): switching away from `metadata` widens it.
  ["defaults", "traceEndpoint"],
  ["defaults", "extTracing"],
  ["defaults", "traceRedactor"],
];

/**
 * Whether writing `path` (a parsed dotted key) may widen reach: the key is inside a reach
 * section or leaf, or is an ancestor of one (setting `daemon` as a whole replaces `daemon.bind`).
 * `defaults.adapters.<slug>.auth` carries billing credentials, which send a session's traffic to
 * whoever owns them.
 */
export function isReachKey(path: readonly string[]): boolean {
  if (path.length === 0) return true;
  if (REACH_SECTIONS.has(path[0]!)) return true;
  const under = (a: readonly string[], b: readonly string[]) => a.length <= b.length && a.every((s, i) => s === b[i]);
  if (REACH_PATHS.some((p) => under(p, path) || under(path, p))) return true;
  if (path[0] === "defaults") {
    if (path.length <= 2 && (path.length === 1 || path[1] === "adapters")) return true;
    if (path[1] === "adapters" && (path.length === 3 || path[3] === "auth")) return true;
  }
  return false;
}
