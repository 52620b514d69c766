/**
 * What each operation requires of its caller, whatever the surface it arrives by (REST, MCP, or
 * the CLI, which calls REST with the per-boot token). The one table: a REST handler and the MCP
 * tool of the same operation both call {@link authorize} with the operation's id, so the same
 * caller gets the same answer from both. docs/authorization.md is generated from it.
 *
 * Two levels:
 * - `local`: SPEC.md Authentication 2, the loopback exemption. A loopback caller without a proxy
 *   header passes; any other caller needs a token when `daemon.authToken` is set (and passes when
 *   it is not). Everyday work: reads, sessions, session-target sentinels.
 * - `token`: a bearer token always (the per-boot token of runtime.json, which the svc CLI sends, or
 *   `daemon.authToken`), even from loopback: whatever widens who can reach the daemon or what it
 *   reaches (outbound webhooks, provider secrets, reach-widening configuration, commands it runs).
 *
 * And for a `local` operation, what a caller beyond loopback without a token needs (`remote`): a
 * remote caller (tunnel, pairing) or a network caller while `daemon.authToken` is unset reads; only
 * a pairing its owner gave the operate scope operates; `owner` operations are loopback's or the
 * token's alone (principal.ts names the callers).
 */
import { SvcError } from "../errors.js";
import { describeCaller, reachOf, type Reach } from "./principal.js";

export type Requirement = "local" | "token";

/**
 * What a caller beyond loopback without a bearer token needs for a `local` operation (a `token`
 * operation always needs the token): `read` any such caller has; `operate` only a pairing given
 * that scope; `owner` none of them (loopback or the token only).
 */
export type RemoteNeed = "read" | "operate" | "owner";

export interface OperationRule {
  summary: string;
  requires: Requirement;
  remote: RemoteNeed;
  /** Routes (`METHOD /path`), MCP tools and CLI verbs that perform it. */
  rest: readonly string[];
  mcp: readonly string[];
  cli: readonly string[];
}

const op = (
  summary: string,
  requires: Requirement,
  remote: RemoteNeed,
  rest: string[],
  mcp: string[],
  cli: string[],
): OperationRule => ({ summary, requires, remote, rest, mcp, cli });

export const OPERATIONS = {
  "sentinel.read": op(
    "list sentinels, show one with its target's status, report provider readiness",
    "local",
    "read",
    ["GET /sentinels", "GET /sentinels/:id", "GET /sentinel-providers"],
    ["sentinel_list", "list_sentinel_adapters"],
    ["sentinel list", "sentinel status", "sentinel providers", "webhooks ls"],
  ),
  "sentinel.watch-session": op(
    "create a sentinel whose target is a session",
    "local",
    "operate",
    ["POST /sentinels (target kind session)"],
    ["sentinel_watch"],
    ["sentinel watch"],
  ),
  "sentinel.create-outbound": op(
    "create a sentinel with any other target (a webhook sends to a URL)",
    "token",
    "owner",
    ["POST /sentinels (any other target kind)"],
    [],
    ["webhooks add", "sentinel create"],
  ),
  "sentinel.remove-session": op(
    "remove a sentinel whose target is a session",
    "local",
    "operate",
    ["DELETE /sentinels/:id (session target)"],
    ["sentinel_unwatch (session target)"],
    ["sentinel unwatch"],
  ),
  "sentinel.remove-outbound": op(
    "remove a sentinel with any other target (stops a receiver's deliveries)",
    "token",
    "owner",
    ["DELETE /sentinels/:id (other targets)"],
    ["sentinel_unwatch (other targets)"],
    ["sentinel unwatch", "webhooks rm"],
  ),
  "sentinel.poll": op(
    "run a poll cycle of the polling providers now",
    "local",
    "operate",
    ["POST /sentinels/poll-now"],
    ["sentinel_poll_now"],
    ["sentinel poll-now"],
  ),
  "sentinel.rotate-secret": op(
    "rotate a webhook sentinel's secret",
    "token",
    "owner",
    ["POST /sentinels/:id/rotate-secret"],
    [],
    ["sentinel rotate-secret"],
  ),
  "sentinel.replay": op(
    "send dead or delivered webhook rows again",
    "token",
    "owner",
    ["POST /sentinels/:id/replay"],
    ["sentinel_replay"],
    ["sentinel replay"],
  ),
  "sentinel.resume": op(
    "resume a webhook sentinel whose delivery endpoint health suspended (its pending events are sent)",
    "token",
    "owner",
    ["POST /sentinels/:id/resume"],
    ["sentinel_resume"],
    ["sentinel resume"],
  ),
  "webhooks.check": op(
    "challenge the suspended webhook sentinels of a callback URL and resume those that answer (the daemon sends to that URL)",
    "token",
    "owner",
    ["POST /webhooks/check"],
    [],
    ["webhooks check"],
  ),
  "provider.setup": op(
    "configure a provider (its secrets, API keys, public URL)",
    "token",
    "owner",
    ["POST /sentinel-providers/:provider/setup"],
    ["setup_sentinel_provider"],
    ["sentinel providers setup"],
  ),
  "events.push": op(
    "push events to the agentpush provider",
    "token",
    "owner",
    ["POST /providers/agentpush/events"],
    [],
    ["sentinel push"],
  ),
  "events.list": op(
    "list the event types an MCP client may subscribe to (the events extension)",
    "local",
    "read",
    [],
    ["events/list"],
    [],
  ),
  "events.poll": op(
    "poll MCP event subscriptions (events since a cursor; a lease per caller, name and arguments)",
    "local",
    "read",
    [],
    ["events/poll"],
    [],
  ),
  "events.subscribe": op(
    "subscribe by webhook over MCP with the bearer token, a session token or the operate scope, or refresh one's subscription (it is a webhook sentinel; a bare loopback caller is refused)",
    "local",
    "operate",
    [],
    ["events/subscribe"],
    [],
  ),
  "events.unsubscribe": op(
    "remove one's own MCP webhook subscription (and its sentinel; the callers of events.subscribe)",
    "local",
    "operate",
    [],
    ["events/unsubscribe"],
    [],
  ),
  "config.read": op(
    "read configuration values (secrets redacted) and the model role table",
    "local",
    "read",
    [],
    ["config_get", "model_roles"],
    ["config show", "config get"],
  ),
  "config.write": op(
    "change a configuration key that does not widen reach (defaults, models, sessions, spawn, worktrees, …)",
    "local",
    "owner",
    [],
    ["config_set"],
    ["config set", "config unset"],
  ),
  "config.write-reach": op(
    "change a key that widens reach: daemon.authToken|bind|port|allowedOrigins|allowedHosts, webhooks, adapters, acpAgents, terminalPresets, tunnel, pairing, profiles, activeProfile, profileAliases, corpusPresetPackages, extJudge.baseUrl|apiKey, features.llmEndpoint, llmEndpoint.upstreams|port, defaults.traceEndpoint, defaults.adapters.*.auth",
    "token",
    "owner",
    [],
    ["config_set (those keys)"],
    ["config set", "config unset"],
  ),
  "session.read": op(
    "list sessions, show one, its recap, transcript and conversation",
    "local",
    "read",
    [
      "GET /sessions",
      "GET /sessions/:id",
      "GET /sessions/:id/recap",
      "GET /sessions/:id/events",
      "GET /sessions/:id/export",
      "GET /conversations",
      "GET /conversations/:id",
    ],
    ["session_list", "session_recap"],
    ["sessions list", "sessions show", "sessions follow", "sessions export"],
  ),
  "session.start": op(
    "start an agent session from a configured adapter",
    "local",
    "operate",
    ["POST /sessions"],
    ["start_agent_session"],
    ["sessions start", "sessions run"],
  ),
  "session.resume": op(
    "resume an ended agent session under its id (its cwd under pairing.allowedRoots for a paired caller, as for a start)",
    "local",
    "operate",
    ["POST /sessions/:id/resume"],
    ["resume_agent_session"],
    ["sessions resume"],
  ),
  "session.terminal": op(
    "start a terminal session running a given command",
    "token",
    "owner",
    ["POST /sessions/terminal"],
    [],
    ["sessions terminal"],
  ),
  "session.prompt": op(
    "prompt, message or stop a session",
    "local",
    "operate",
    ["POST /sessions/:id/prompt", "POST /sessions/:id/stop"],
    ["agent_prompt", "message_send", "message_reply", "message_parent"],
    ["sessions prompt", "sessions stop"],
  ),
  "session.judge": op(
    "ask the session steward's judge for a verdict on a session now (it is kept on the session; nothing is sent to it)",
    "local",
    "operate",
    ["POST /sessions/:id/judge"],
    ["session_judge"],
    ["sessions judge"],
  ),
  "worktree.manage": op(
    "list and reclaim agent worktrees (the CLI does it itself, as the user, with git; it only reads the session list from the daemon)",
    "local",
    "owner",
    [],
    [],
    ["worktree ls", "worktree rm", "worktree archive", "worktree gc"],
  ),
  "worktree.read": op(
    "list agent worktrees with their state and live session (read-only; the dashboard's view)",
    "local",
    "read",
    ["GET /worktrees"],
    [],
    [],
  ),
  "adapters.read": op(
    "list the plugins the daemon loaded and the load report of those that failed",
    "local",
    "read",
    ["GET /adapters"],
    [],
    [],
  ),
  "dashboard.login": op(
    "make a one-time dashboard login code (60 s, single use; the page exchanges it for a session cookie that stands for the token holder)",
    "token",
    "owner",
    ["POST /dashboard/login-codes"],
    [],
    ["open"],
  ),
  "swarm.run": op(
    "run a swarm file's steps as agent sessions from configured adapters (or resolve it with dryRun); cancel a run",
    "local",
    "operate",
    ["POST /swarm/runs", "POST /swarm/runs/:id/cancel"],
    ["swarm_run", "swarm_cancel"],
    ["run-swarm"],
  ),
  "swarm.read": op(
    "list swarm runs and show one with its plan and step results",
    "local",
    "read",
    ["GET /swarm/runs", "GET /swarm/runs/:id"],
    ["swarm_runs"],
    ["run-swarm ls", "run-swarm show"],
  ),
  "remote.read": op(
    "list pairings with each standing link's state, the tunnel's state, the daemon's public key",
    "local",
    "read",
    ["GET /pairings", "GET /remote/status"],
    [],
    ["pair ls"],
  ),
  "pairing.offer": op(
    "make a one-time pairing offer with a scope, read by default (the device that accepts may then reach this daemon)",
    "token",
    "owner",
    ["POST /pairing/offers"],
    [],
    ["pair offer"],
  ),
  "pairing.accept": op(
    "accept another daemon's pairing offer",
    "token",
    "owner",
    ["POST /pairing/accept"],
    [],
    ["pair accept"],
  ),
  "pairing.scope": op(
    "set what a paired device may do here: read, or operate (start, prompt and stop sessions, watch, run swarms under pairing.allowedRoots)",
    "token",
    "owner",
    ["POST /pairings/:id/scope"],
    [],
    ["pair scope"],
  ),
  "pairing.remove": op(
    "remove a pairing and close its link",
    "token",
    "owner",
    ["DELETE /pairings/:id"],
    [],
    ["pair rm"],
  ),
  "pairing.call": op(
    "send a request to a paired daemon through the encrypted link (the far daemon authorizes it with the pairing's scope)",
    "token",
    "owner",
    ["POST /pairings/:id/request"],
    [],
    ["--remote <pairing> <verb>"],
  ),
  "llm.read": op(
    "see the llm-endpoint sidecar's state, its routes (where each key comes from, never a key) and the model usage it counted",
    "local",
    "read",
    ["GET /llm-endpoint/status", "GET /llm-endpoint/usage"],
    ["llm_endpoint_status", "llm_endpoint_usage"],
    ["llm-endpoint status", "llm-endpoint usage"],
  ),
  "llm.control": op(
    "start or stop the llm-endpoint sidecar (stopped, the sessions started next call their providers directly)",
    "token",
    "owner",
    ["POST /llm-endpoint/start", "POST /llm-endpoint/stop"],
    ["llm_endpoint_start", "llm_endpoint_stop"],
    ["llm-endpoint start", "llm-endpoint stop"],
  ),
  "daemon.status": op(
    "see the daemon's state: sessions by activity, sentinels, pending and dead deliveries, adapters loaded and failed, pairings and the tunnel",
    "local",
    "read",
    ["GET /status"],
    [],
    ["status"],
  ),
  "daemon.events": op("follow the daemon's event stream", "local", "read", ["GET /events"], [], []),
  "daemon.heartbeat": op(
    "tick the heartbeat (wakes what waits on it)",
    "local",
    "operate",
    ["POST /heartbeat/tick"],
    [],
    [],
  ),
} as const satisfies Record<string, OperationRule>;

export type OperationId = keyof typeof OPERATIONS;

/** Whether `principal` (from auth.ts's authenticate) presented a valid bearer token. */
export function hasToken(principal: string): boolean {
  return principal.startsWith("token:");
}

/**
 * Throws unless `principal` may perform `id`: `unauthorized` when a `token` operation lacks the
 * token, `forbidden` when a caller beyond loopback without a token lacks the scope (a `read`
 * caller asking to operate, anyone but the owner asking for an `owner` operation). Every surface
 * asks here: the REST server for each route, `/mcp` for each tool, handlers for conditional rules.
 */
export function authorize(id: OperationId, principal: string): void {
  const rule: OperationRule = OPERATIONS[id];
  const what = `${id} (${rule.summary.split(" (")[0]})`;
  if (rule.requires === "token") return requireToken(what, principal);
  requireReach(what, rule.remote, principal);
}

const RANK: Record<Reach, number> = { read: 0, operate: 1, owner: 2 };

/** Throws `forbidden` unless the caller reaches `need` (see principal.ts). */
export function requireReach(what: string, need: RemoteNeed, principal: string): void {
  const reach = reachOf(principal);
  if (RANK[reach] >= RANK[need]) return;
  const { who, more } = describeCaller(principal);
  const needs = need === "operate" ? "the operate scope" : "the daemon's owner (a loopback caller or a bearer token)";
  throw new SvcError(
    "forbidden",
    `${what} needs ${needs}; ${who} may only ${reach === "operate" ? "read and operate" : "read"}: ${more}`,
  );
}

/**
 * What a caller needs at a route's door: `token` when every operation it serves needs the bearer
 * token (401 without it, whoever asks), else what a caller beyond loopback needs (the least of
 * its operations' scopes; without an operation, read for GET and operate otherwise).
 */
export function routeNeed(method: string, path: string): { id?: OperationId; need: RemoteNeed | "token" } {
  const ids = BY_ROUTE_ALL.get(`${method} ${path}`);
  if (!ids) return { need: method === "GET" ? "read" : "operate" };
  return {
    id: ids[0]!,
    need: ids.every((i) => OPERATIONS[i].requires === "token")
      ? "token"
      : leastOf(ids.filter((i) => OPERATIONS[i].requires !== "token")),
  };
}

/** What a caller needs for an MCP tool: its operation's rule, else read for a read-only tool and operate otherwise. */
export function toolNeed(name: string, readOnly: boolean): RemoteNeed {
  const ids = BY_TOOL.get(name)?.filter((i) => OPERATIONS[i].requires !== "token");
  return ids?.length ? leastOf(ids) : readOnly ? "read" : "operate";
}

/**
 * A route or tool that serves several operations (`POST /sentinels`: session or outbound target)
 * needs the least of them at the door; its handler asks `authorize` for the one it performs.
 */
function leastOf(ids: OperationId[]): RemoteNeed {
  return ids.map((i) => OPERATIONS[i].remote).sort((a, b) => RANK[a] - RANK[b])[0]!;
}

function indexBy(pick: (r: OperationRule) => readonly string[]): Map<string, OperationId[]> {
  const m = new Map<string, OperationId[]>();
  for (const [id, r] of Object.entries(OPERATIONS) as [OperationId, OperationRule][]) {
    for (const entry of pick(r)) {
      const key = entry.split(" (")[0]!;
      m.set(key, [...(m.get(key) ?? []), id]);
    }
  }
  return m;
}

const BY_ROUTE_ALL = indexBy((r) => r.rest);
const BY_TOOL = indexBy((r) => r.mcp);

/** Throws `unauthorized`, naming `what`, unless the caller presented the daemon's bearer token. */
export function requireToken(what: string, principal: string): void {
  if (hasToken(principal)) return;
  throw new SvcError(
    "unauthorized",
    `${what} needs a bearer token even from loopback: the per-boot token in runtime.json (the svc CLI sends it) or daemon.authToken`,
  );
}
