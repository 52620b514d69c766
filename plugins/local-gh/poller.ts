/**
 * One poll cycle of the `local-gh` provider over the subjects of its active sentinels:
 * - each repository: `repos/{o}/{r}/events` (conditional on its ETag; 304s cost no rate limit);
 * - each pull request: `repos/{o}/{r}/pulls/{n}` (conditional), whose state changes become
 *   `github.pull_request.*` events, and the check runs of its head commit.
 * A first poll of a repository or pull request is a baseline: only what happened after the watch
 * started is ingested (a closed pull request always is: it ends `until: subject_terminal`). Event
 * ids are stable (`ghev-<event id>`, `ghpr-<pr id>-<action>-<stamp>`, `ghcheck-<run id>-<stamp>`),
 * so polling the same item twice never duplicates. Rate limiting stops the cycle and blocks
 * polling until the limit resets.
 */
import type { Clock, Logger, SentinelIngress, SvcEvent } from "../../core/plugin-api/index.js";
import { SvcError } from "../../core/plugin-api/index.js";
import { mapGithubEvent, type GhCli, type GhResponse } from "../github-common/index.js";
import { mapRepoEvent } from "./events-api.js";
import { backoffMs, isRateLimited } from "./rate-limit.js";
import { watchSetOf, type PrWatch, type RepoWatch } from "./watch-set.js";

type Obj = Record<string, any>;

interface Cond {
  etag?: string;
  seen: Set<string>;
  baselined: boolean;
}

interface PrState {
  pr: Cond;
  snapshot?: { state: string; merged: boolean; sha: string; draft: boolean };
  checks: Cond & { sha?: string };
}

export interface PollerDeps {
  gh: GhCli;
  ingress(): SentinelIngress;
  clock: Clock;
  logger: Logger;
  intervalMs(): number;
}

export interface CycleReport {
  skipped?: "rate_limited";
  ingested: number;
  errors: string[];
}

class RateLimited extends Error {
  constructor(readonly res: GhResponse) {
    super("rate limited");
  }
}

const SEEN_CAP = 2000;

export class Poller {
  private readonly repos = new Map<string, Cond>();
  private readonly prs = new Map<string, PrState>();
  private failures = 0;
  blockedUntil = 0;
  lastPollAt?: number;
  lastErrors: string[] = [];
  /** The server's X-Poll-Interval, when it asks for more than our interval. */
  serverIntervalMs = 0;

  constructor(private readonly deps: PollerDeps) {}

  watching(): { repos: number; pullRequests: number } {
    const w = watchSetOf(this.deps.ingress().active("local-gh"));
    return { repos: w.repos.size, pullRequests: w.prs.size };
  }

  async cycle(): Promise<CycleReport> {
    const now = this.deps.clock.now();
    if (now < this.blockedUntil) return { skipped: "rate_limited", ingested: 0, errors: [] };
    const watch = watchSetOf(this.deps.ingress().active("local-gh"));
    for (const k of this.repos.keys()) if (!watch.repos.has(k)) this.repos.delete(k);
    for (const k of this.prs.keys()) if (!watch.prs.has(k)) this.prs.delete(k);
    const events: SvcEvent[] = [];
    const errors: string[] = [];
    try {
      const polledPrs = new Set([...watch.prs.values()].map((p) => `${p.owner}/${p.repo}#${p.number}`));
      for (const [key, w] of watch.repos) await this.guard(key, errors, () => this.pollRepo(key, w, polledPrs, events));
      for (const [key, w] of watch.prs) await this.guard(key, errors, () => this.pollPr(key, w, events));
      this.failures = 0;
    } catch (err) {
      if (!(err instanceof RateLimited)) throw err;
      this.failures++;
      const wait = backoffMs(err.res, now, this.deps.intervalMs(), this.failures);
      this.blockedUntil = now + wait;
      errors.push(`rate limited by GitHub: polling paused for ${Math.ceil(wait / 1000)} s`);
      this.deps.logger.warn("local-gh rate limited", { status: err.res.status, waitMs: wait });
    }
    // In occurrence order, so a check that finished before a merge is delivered before the merge ends a sentinel.
    events.sort((a, b) => (Date.parse(a.time ?? "") || 0) - (Date.parse(b.time ?? "") || 0));
    if (events.length) await this.deps.ingress().ingest("local-gh", events);
    this.lastPollAt = now;
    this.lastErrors = errors;
    return { ingested: events.length, errors };
  }

  private async guard(key: string, errors: string[], fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      if (err instanceof RateLimited) throw err;
      const message = `${key}: ${(err as Error).message}`;
      errors.push(message);
      this.deps.logger.warn("local-gh poll failed", { subject: key, error: (err as Error).message });
    }
  }

  private async get(path: string, cond: Cond): Promise<GhResponse | undefined> {
    const res = await this.deps.gh.api({ path, headers: cond.etag ? { "If-None-Match": cond.etag } : {} });
    if (isRateLimited(res)) throw new RateLimited(res);
    if (res.status === 304) return undefined;
    if (res.status !== 200) {
      const msg = typeof (res.body as Obj)?.message === "string" ? (res.body as Obj).message : `HTTP ${res.status}`;
      throw new SvcError("unavailable", `GitHub answered ${res.status} (${msg})`);
    }
    if (res.headers.etag) cond.etag = res.headers.etag;
    return res;
  }

  private async pollRepo(key: string, w: RepoWatch, polledPrs: Set<string>, out: SvcEvent[]): Promise<void> {
    const cond = getOr(this.repos, key, () => ({ seen: new Set<string>(), baselined: false }));
    const res = await this.get(`repos/${w.owner}/${w.repo}/events?per_page=100`, cond);
    if (!res) return;
    const poll = Number(res.headers["x-poll-interval"]);
    if (Number.isFinite(poll) && poll > 0) this.serverIntervalMs = poll * 1000;
    const list = Array.isArray(res.body) ? (res.body as Obj[]) : [];
    for (const raw of [...list].reverse()) {
      const e = mapRepoEvent(raw);
      if (!e || cond.seen.has(e.id)) continue;
      remember(cond.seen, e.id);
      if (!cond.baselined && Date.parse(e.time ?? "") < w.since) continue;
      if (isPrStateEvent(e) && polledPrs.has(`${key}#${(e.data as Obj).number}`)) continue;
      out.push(e);
    }
    cond.baselined = true;
  }

  private async pollPr(key: string, w: PrWatch, out: SvcEvent[]): Promise<void> {
    const st = getOr<string, PrState>(this.prs, key, () => ({
      pr: { seen: new Set(), baselined: false },
      checks: { seen: new Set(), baselined: false },
    }));
    const res = await this.get(`repos/${w.owner}/${w.repo}/pulls/${w.number}`, st.pr);
    if (res) {
      const pr = res.body as Obj;
      const next = {
        state: String(pr.state),
        merged: pr.merged === true || !!pr.merged_at,
        sha: String(pr.head?.sha ?? ""),
        draft: pr.draft === true,
      };
      const action = transition(st.snapshot, next);
      st.snapshot = next;
      if (action) {
        const stamp = action === "closed" ? pr.closed_at : action === "synchronize" ? next.sha : pr.updated_at;
        const id = `ghpr-${pr.id}-${action}-${String(Date.parse(stamp) || stamp).replace(/[^A-Za-z0-9_-]/g, "")}`;
        const payload = {
          action,
          number: w.number,
          pull_request: pr,
          repository: { full_name: `${w.owner}/${w.repo}` },
          sender: pr.merged_by ?? pr.user,
        };
        const e = mapGithubEvent("pull_request", payload, {
          id,
          fallbackTime: new Date(this.deps.clock.now()).toISOString(),
        });
        if (e && !st.pr.seen.has(id)) {
          remember(st.pr.seen, id);
          out.push(e);
        }
      }
    }
    if (st.snapshot?.sha) await this.pollChecks(w, st, out);
  }

  private async pollChecks(w: PrWatch, st: PrState, out: SvcEvent[]): Promise<void> {
    const sha = st.snapshot!.sha;
    if (st.checks.sha !== sha) Object.assign(st.checks, { sha, etag: undefined });
    const res = await this.get(`repos/${w.owner}/${w.repo}/commits/${sha}/check-runs?per_page=100`, st.checks);
    if (!res) return;
    const runs = Array.isArray((res.body as Obj)?.check_runs) ? ((res.body as Obj).check_runs as Obj[]) : [];
    for (const run of runs) {
      if (run.status !== "completed" || typeof run.completed_at !== "string") continue;
      const id = `ghcheck-${run.id}-${Date.parse(run.completed_at) || 0}`;
      if (st.checks.seen.has(id)) continue;
      remember(st.checks.seen, id);
      if (!st.checks.baselined && Date.parse(run.completed_at) < w.since) continue;
      const checkRun = {
        ...run,
        check_suite: { ...(run.check_suite ?? {}), head_branch: run.check_suite?.head_branch ?? null },
        pull_requests: [{ number: w.number }],
      };
      const e = mapGithubEvent(
        "check_run",
        { action: "completed", check_run: checkRun, repository: { full_name: `${w.owner}/${w.repo}` } },
        { id, fallbackTime: run.completed_at },
      );
      if (e) out.push(e);
    }
    st.checks.baselined = true;
  }
}

const PR_STATE_ACTIONS = new Set(["closed", "reopened", "synchronize", "ready_for_review", "converted_to_draft"]);

/** State changes of a polled pull request come from its own poll (one event per change, one id). */
function isPrStateEvent(e: SvcEvent): boolean {
  return e.type.startsWith("github.pull_request.") && PR_STATE_ACTIONS.has(e.type.slice("github.pull_request.".length));
}

/** The pull_request action between two snapshots; a first snapshot only reports a closed pull request. */
function transition(prev: PrState["snapshot"], next: NonNullable<PrState["snapshot"]>): string | undefined {
  if (!prev) return next.state === "closed" ? "closed" : undefined;
  if (prev.state !== "closed" && next.state === "closed") return "closed";
  if (prev.state === "closed" && next.state === "open") return "reopened";
  if (prev.draft && !next.draft) return "ready_for_review";
  if (!prev.draft && next.draft) return "converted_to_draft";
  if (prev.sha !== next.sha && next.state === "open") return "synchronize";
  return undefined;
}

function getOr<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (!v) map.set(key, (v = make()));
  return v;
}

function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > SEEN_CAP) seen.delete(seen.values().next().value!);
}
