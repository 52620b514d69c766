/**
 * Maps a GitHub webhook payload (by its `X-GitHub-Event` name) to an svc event:
 * `type` is `github.<event>.<action>` (`github.push.pushed` for pushes, `github.<event>.occurred`
 * for other events without an action), `subjects` are the repository (or, for an organization or
 * account event, `github:<owner>`), then the pull requests or issue it concerns, then the branch.
 * `data` is a compact summary, never the whole payload. Eight events have a specific mapping; every
 * other event GitHub sends gets the generic one (docs/github.md). Pure: the caller gives the id.
 */
import type { SvcEvent } from "../../core/plugin-api/index.js";
import { branchSubject, itemSubject, repoSubject } from "./subjects.js";

/** The webhook event names with a specific mapping (every other name gets the generic one). */
export const GITHUB_EVENT_NAMES = [
  "pull_request",
  "pull_request_review",
  "pull_request_review_comment",
  "issue_comment",
  "check_run",
  "check_suite",
  "workflow_run",
  "push",
] as const;

type GithubEventName = (typeof GITHUB_EVENT_NAMES)[number];

export interface MapOptions {
  /** The stable event id (a delivery id, or one derived from the polled object); must not contain `.`. */
  id: string;
  /** ISO time used when the payload carries none. */
  fallbackTime: string;
}

type Obj = Record<string, any>;

function isGithubEventName(name: string): name is GithubEventName {
  return (GITHUB_EVENT_NAMES as readonly string[]).includes(name);
}

/** The svc event for a payload; undefined only when the payload is not a JSON object or the name is not an event name. */
export function mapGithubEvent(name: string, payload: unknown, opts: MapOptions): SvcEvent | undefined {
  if (!isObj(payload) || !/^[a-z][a-z0-9_]{0,99}$/.test(name)) return undefined;
  const repo = repoOf(payload);
  if (!isGithubEventName(name) || !repo) return mapGeneric(name, payload, repo, opts);
  const mapped = MAPPERS[name](payload, repo);
  if (!mapped) return mapGeneric(name, payload, repo, opts);
  const action = name === "push" ? "pushed" : safeSegment(String(payload.action ?? "unknown"));
  const subjects = [repoSubject(repo.owner, repo.repo)];
  for (const n of mapped.numbers) subjects.push(itemSubject(repo.owner, repo.repo, n));
  if (mapped.branch) subjects.push(branchSubject(repo.owner, repo.repo, mapped.branch));
  return {
    id: opts.id.replace(/\./g, "-"),
    type: `github.${name}.${action}`,
    subjects: [...new Set(subjects)],
    time: typeof mapped.time === "string" && mapped.time ? mapped.time : opts.fallbackTime,
    data: {
      event: name,
      action,
      repository: `${repo.owner}/${repo.repo}`,
      sender: login(payload.sender),
      ...mapped.data,
    },
  };
}

/**
 * The generic mapping, for every event without a specific one: type `github.<event>.<action>`
 * (`occurred` when the payload has no action), subjects from the repository, the number of the
 * issue, pull request or discussion it concerns, and the branch of a `refs/heads/` ref; an
 * organization or account event (no repository) has the subject `github:<login>`, and a
 * platform-wide one (no repository and no account, e.g. a global security advisory)
 * `github:<event>` (event names have underscores, GitHub logins cannot). `data` names the event,
 * action, repository, sender and those identifiers, never the whole payload.
 */
function mapGeneric(
  name: string,
  p: Obj,
  repo: { owner: string; repo: string } | undefined,
  opts: MapOptions,
): SvcEvent {
  const owner = repo ? undefined : accountOf(p);
  const action = typeof p.action === "string" && p.action ? safeSegment(p.action) : "occurred";
  const number =
    num(p.number) ?? num(obj(p.issue).number) ?? num(obj(p.pull_request).number) ?? num(obj(p.discussion).number);
  const ref = typeof p.ref === "string" ? p.ref : undefined;
  const branch = ref?.startsWith("refs/heads/") ? ref.slice(11) : p.ref_type === "branch" && ref ? ref : undefined;
  const subjects = repo ? [repoSubject(repo.owner, repo.repo)] : [`github:${(owner ?? name).toLowerCase()}`];
  if (repo && number !== undefined) subjects.push(itemSubject(repo.owner, repo.repo, number));
  if (repo && branch) subjects.push(branchSubject(repo.owner, repo.repo, branch));
  const time = [obj(p[name]).updated_at, obj(p.issue).updated_at, obj(p.pull_request).updated_at].find(
    (t) => typeof t === "string" && t,
  );
  return {
    id: opts.id.replace(/\./g, "-"),
    type: `github.${name}.${action}`,
    subjects: [...new Set(subjects)],
    time: (time as string | undefined) ?? opts.fallbackTime,
    data: {
      event: name,
      action,
      ...(repo ? { repository: `${repo.owner}/${repo.repo}` } : owner ? { account: owner } : {}),
      sender: login(p.sender),
      ...(number !== undefined ? { number } : {}),
      ...(ref !== undefined ? { ref } : {}),
      ...(typeof obj(p[name]).html_url === "string" ? { url: obj(p[name]).html_url } : {}),
    },
  };
}

/** The organization or account an event without a repository concerns. */
function accountOf(p: Obj): string | undefined {
  const candidates = [
    obj(p.organization).login,
    obj(obj(p.installation).account).login,
    obj(p.enterprise).slug,
    obj(p.marketplace_purchase).account?.login,
    login(p.sender),
  ];
  const found = candidates.find((c): c is string => typeof c === "string" && /^[A-Za-z0-9_.-]{1,100}$/.test(c));
  return found;
}

interface Mapped {
  numbers: number[];
  branch?: string;
  time?: string;
  data: Obj;
}

const MAPPERS: Record<GithubEventName, (p: Obj, repo: { owner: string; repo: string }) => Mapped | undefined> = {
  pull_request: (p) => {
    const pr = obj(p.pull_request);
    const n = num(p.number ?? pr.number);
    if (n === undefined) return undefined;
    return { numbers: [n], time: pr.updated_at, data: { number: n, ...prSummary(pr) } };
  },
  pull_request_review: (p) => {
    const pr = obj(p.pull_request);
    const r = obj(p.review);
    const n = num(pr.number);
    if (n === undefined) return undefined;
    return {
      numbers: [n],
      time: r.submitted_at ?? pr.updated_at,
      data: {
        number: n,
        review: {
          id: r.id,
          state: r.state,
          author: login(r.user),
          body: clip(r.body),
          url: r.html_url,
          commit: r.commit_id,
        },
      },
    };
  },
  pull_request_review_comment: (p) => {
    const pr = obj(p.pull_request);
    const c = obj(p.comment);
    const n = num(pr.number);
    if (n === undefined) return undefined;
    return {
      numbers: [n],
      time: c.updated_at ?? c.created_at,
      data: {
        number: n,
        comment: {
          id: c.id,
          author: login(c.user),
          body: clip(c.body),
          path: c.path,
          line: c.line ?? null,
          url: c.html_url,
          reviewId: c.pull_request_review_id,
        },
      },
    };
  },
  issue_comment: (p) => {
    const issue = obj(p.issue);
    const c = obj(p.comment);
    const n = num(issue.number);
    if (n === undefined) return undefined;
    return {
      numbers: [n],
      time: c.updated_at ?? c.created_at,
      data: {
        number: n,
        isPullRequest: issue.pull_request !== undefined,
        title: issue.title,
        comment: { id: c.id, author: login(c.user), body: clip(c.body), url: c.html_url },
      },
    };
  },
  check_run: (p) => {
    const run = obj(p.check_run);
    return {
      numbers: prNumbers(run.pull_requests),
      branch: obj(run.check_suite).head_branch ?? undefined,
      time: run.completed_at ?? run.started_at,
      data: {
        checkRun: {
          id: run.id,
          name: run.name,
          status: run.status,
          conclusion: run.conclusion ?? null,
          headSha: run.head_sha,
          url: run.html_url,
        },
      },
    };
  },
  check_suite: (p) => {
    const suite = obj(p.check_suite);
    return {
      numbers: prNumbers(suite.pull_requests),
      branch: suite.head_branch ?? undefined,
      time: suite.updated_at,
      data: {
        checkSuite: {
          id: suite.id,
          app: obj(suite.app).slug,
          status: suite.status,
          conclusion: suite.conclusion ?? null,
          headSha: suite.head_sha,
        },
      },
    };
  },
  workflow_run: (p) => {
    const run = obj(p.workflow_run);
    return {
      numbers: prNumbers(run.pull_requests),
      branch: run.head_branch ?? undefined,
      time: run.updated_at,
      data: {
        workflowRun: {
          id: run.id,
          name: run.name ?? obj(p.workflow).name,
          runNumber: run.run_number,
          attempt: run.run_attempt,
          event: run.event,
          status: run.status,
          conclusion: run.conclusion ?? null,
          headSha: run.head_sha,
          url: run.html_url,
        },
      },
    };
  },
  push: (p) => {
    const ref = String(p.ref ?? "");
    const head = obj(p.head_commit);
    const commits = Array.isArray(p.commits) ? p.commits : [];
    return {
      numbers: [],
      branch: ref.startsWith("refs/heads/") ? ref.slice(11) : ref || undefined,
      time: head.timestamp,
      data: {
        ref,
        before: p.before,
        after: p.after,
        forced: p.forced === true,
        created: p.created === true,
        deleted: p.deleted === true,
        commits: commits.length,
        headCommit: head.id
          ? {
              id: head.id,
              message: clip(head.message, 500),
              author: obj(head.author).username ?? obj(head.author).name,
            }
          : null,
        compare: p.compare,
      },
    };
  },
};

/** The pull request fields `pull_request` events carry. */
function prSummary(pr: Obj): Obj {
  return {
    title: pr.title,
    state: pr.state,
    merged: pr.merged === true || (pr.merged_at !== null && pr.merged_at !== undefined),
    draft: pr.draft === true,
    author: login(pr.user),
    url: pr.html_url,
    head: { ref: obj(pr.head).ref, sha: obj(pr.head).sha },
    base: { ref: obj(pr.base).ref },
    closedAt: pr.closed_at ?? null,
    mergedAt: pr.merged_at ?? null,
  };
}

function repoOf(p: Obj): { owner: string; repo: string } | undefined {
  const full = obj(p.repository).full_name;
  if (typeof full !== "string") return undefined;
  const [owner, repo] = full.split("/");
  return owner && repo ? { owner, repo } : undefined;
}

function prNumbers(list: unknown): number[] {
  return Array.isArray(list) ? list.map((x) => num(obj(x).number)).filter((n): n is number => n !== undefined) : [];
}

function safeSegment(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, "_") || "unknown";
}

function clip(s: unknown, max = 2000): string | null {
  if (typeof s !== "string") return null;
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function login(u: unknown): string | null {
  const l = obj(u).login;
  return typeof l === "string" ? l : null;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined;
}

function obj(v: unknown): Obj {
  return isObj(v) ? v : {};
}

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
