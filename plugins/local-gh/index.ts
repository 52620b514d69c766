/**
 * The `local-gh` provider: watches GitHub repositories (`github:<owner>/<repo>`) and pull requests
 * (`github:<owner>/<repo>#<n>`) by polling through the locally installed, authenticated `gh` CLI.
 * Default interval 60 s (or the server's X-Poll-Interval when larger); setup takes `intervalSeconds`.
 * In a team (several daemons on one store) it polls only on the daemon holding the lease
 * `provider:local-gh`; outside team mode that lease is always held.
 */
import {
  SvcError,
  defineProvider,
  type Lease,
  type PluginContext,
  type ProviderEventType,
  type ProviderInstance,
} from "../../core/plugin-api/index.js";
import {
  createGhCli,
  defaultTypes,
  githubEventTypes,
  resolveGithubSubject,
  terminalSubjects,
  type GhCli,
} from "../github-common/index.js";
import { Poller } from "./poller.js";

const DEFAULT_INTERVAL_MS = 60_000;
/**
 * The GitHub event families this provider's polling sees (docs/providers.md): the Events API's
 * pull request, review, review comment, issue comment and push events, and completed check runs.
 */
export const LOCAL_GH_FAMILIES = [
  "pull_request",
  "pull_request_review",
  "pull_request_review_comment",
  "issue_comment",
  "push",
  "check_run",
];
/** Its MCP event types: those families, check runs only `completed`. */
export const LOCAL_GH_TYPES = () =>
  githubEventTypes({ only: LOCAL_GH_FAMILIES, restrict: { check_run: ["completed"] } });
const NS = "provider-local-gh";
/** The role of the team's one poller (host service `leadership`). */
export const LOCAL_GH_LEASE = "provider:local-gh";
/** How often a daemon that does not poll looks whether it holds the lease now. */
const LEASE_CHECK_MS = 1_000;

export function createLocalGhProvider(
  ctx: PluginContext,
  gh: GhCli = createGhCli(),
): ProviderInstance & { poller: Poller } {
  let intervalMs = DEFAULT_INTERVAL_MS;
  let loaded = false;
  const loadInterval = async () => {
    if (loaded || !ctx.hasService("credentials")) return;
    const stored = Number(await ctx.service("credentials").get(NS, "intervalSeconds"));
    if (Number.isInteger(stored) && stored > 0) intervalMs = stored * 1000;
    loaded = true;
  };
  const poller = new Poller({
    gh,
    ingress: () => ctx.service("sentinels"),
    clock: ctx.clock,
    logger: ctx.logger,
    intervalMs: () => intervalMs,
  });
  let chain: Promise<unknown> = Promise.resolve();
  /** Runs a cycle after those already running or queued; `starting` runs first, before the cycle reads its watch set. */
  const runCycle = (starting?: () => Promise<void>) => {
    const next = chain.then(async () => {
      await starting?.();
      await loadInterval();
      return poller.cycle();
    });
    chain = next.catch((err: Error) => ctx.logger.warn("local-gh poll cycle failed", { error: err.message }));
    return next;
  };
  let queued: Promise<unknown> | undefined;
  /**
   * One early cycle for any number of watches in a row (e.g. start and every active sentinel at boot):
   * a call joins the queued cycle until that cycle starts, which is after the current macrotask, so
   * watches handed over one after another without waiting on I/O all join it. A watch after the
   * cycle started queues the next one, since the running cycle may have read its watch set already.
   */
  const soon = () =>
    (queued ??= runCycle(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      queued = undefined;
    }));
  let abort: AbortController | undefined;
  let eventTypes: ProviderEventType[] | undefined;
  let loop: Promise<void> | undefined;
  let lease: Lease | undefined;
  /** Whether this daemon is the team's poller (a host without `leadership`: always). */
  const polling = () => lease?.held() ?? true;

  return {
    poller,
    defaultTypes,
    terminalSubjects,
    resolveSubject: resolveGithubSubject,
    eventTypes: () => (eventTypes ??= LOCAL_GH_TYPES()),
    /**
     * A new watch is polled at once: its baseline is taken now, and a pull request already closed
     * ends its sentinel. (No unwatch: each cycle polls only what active sentinels still watch, and
     * drops the conditional-request state of the rest.)
     */
    async watch() {
      if (polling()) void soon().catch(() => undefined);
    },
    async pollNow() {
      await runCycle();
    },
    async readiness() {
      const st = await gh.status();
      const now = ctx.clock.now();
      const limited = poller.blockedUntil > now ? new Date(poller.blockedUntil).toISOString() : undefined;
      const detail = limited ? `${st.detail}; rate limited by GitHub until ${limited}` : st.detail;
      return {
        ready: st.installed && st.authenticated,
        detail,
        gh: { installed: st.installed, authenticated: st.authenticated },
        intervalSeconds: Math.max(intervalMs, poller.serverIntervalMs) / 1000,
        ...(ctx.hasService("sentinels") ? { watching: poller.watching() } : {}),
        ...(limited ? { rateLimitedUntil: limited } : {}),
        ...(poller.lastPollAt ? { lastPollAt: new Date(poller.lastPollAt).toISOString() } : {}),
        ...(poller.lastErrors.length ? { lastErrors: poller.lastErrors } : {}),
      };
    },
    async configure(input) {
      const unknown = Object.keys(input).filter((k) => k !== "intervalSeconds");
      if (unknown.length)
        throw new SvcError(
          "invalid_input",
          `local-gh settings: unknown ${unknown.join(", ")}; allowed: intervalSeconds`,
        );
      const n = input.intervalSeconds;
      if (typeof n !== "number" || !Number.isInteger(n) || n < 10 || n > 3600) {
        throw new SvcError("invalid_input", "local-gh settings: intervalSeconds must be an integer from 10 to 3600", {
          details: [{ path: "intervalSeconds", message: "an integer from 10 to 3600" }],
        });
      }
      await ctx.service("credentials").set(NS, "intervalSeconds", String(n));
      intervalMs = n * 1000;
      loaded = true;
      return { intervalSeconds: n };
    },
    async start() {
      abort = new AbortController();
      const signal = abort.signal;
      if (ctx.hasService("leadership")) lease = ctx.service("leadership").lease(LOCAL_GH_LEASE);
      loop = (async () => {
        for (let first = true; !signal.aborted; ) {
          // Another daemon of the team polls: look again soon, and poll at once when the role is ours.
          if (!polling()) {
            first = true;
            await ctx.sleep(LEASE_CHECK_MS, signal).catch(() => undefined);
            continue;
          }
          await (first ? soon() : runCycle()).catch(() => undefined);
          first = false;
          const wait = Math.max(intervalMs, poller.serverIntervalMs, poller.blockedUntil - ctx.clock.now());
          await ctx.sleep(wait, signal).catch(() => undefined);
        }
      })();
    },
    async stop() {
      abort?.abort();
      await loop;
      await lease?.release();
      lease = undefined;
    },
  };
}

export default defineProvider({
  kind: "local-gh",
  description: "Polls GitHub repositories and pull requests through the local gh CLI",
  setup: (ctx) => createLocalGhProvider(ctx),
});
