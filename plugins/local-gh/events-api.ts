/**
 * Repository events from the REST Events API (`GET repos/{o}/{r}/events`) turned into the webhook
 * payload shape, so the one github-common mapper serves both providers.
 */
import type { SvcEvent } from "../../core/plugin-api/index.js";
import { mapGithubEvent } from "../github-common/index.js";

type Obj = Record<string, any>;

const NAMES: Record<string, string> = {
  PullRequestEvent: "pull_request",
  PullRequestReviewEvent: "pull_request_review",
  PullRequestReviewCommentEvent: "pull_request_review_comment",
  IssueCommentEvent: "issue_comment",
  PushEvent: "push",
};

/** The svc event for one Events API entry (id `ghev-<event id>`), or undefined when we do not map its type. */
export function mapRepoEvent(ev: Obj): SvcEvent | undefined {
  const name = NAMES[String(ev?.type)];
  if (!name || (typeof ev.id !== "string" && typeof ev.id !== "number")) return undefined;
  const p: Obj = {
    ...(ev.payload ?? {}),
    repository: { full_name: ev.repo?.name },
    sender: { login: ev.actor?.login },
  };
  if (name === "pull_request_review" && p.action === "created") p.action = "submitted";
  if (name === "push") Object.assign(p, pushPayload(p, ev));
  const time = typeof ev.created_at === "string" ? ev.created_at : new Date(0).toISOString();
  const event = mapGithubEvent(name, p, { id: `ghev-${ev.id}`, fallbackTime: time });
  return event && { ...event, time };
}

function pushPayload(p: Obj, ev: Obj): Obj {
  const commits: Obj[] = Array.isArray(p.commits) ? p.commits : [];
  const last = commits.at(-1);
  return {
    after: p.after ?? p.head,
    commits: commits.map((c) => ({ id: c.sha, message: c.message, author: c.author })),
    head_commit: last ? { id: last.sha, message: last.message, timestamp: ev.created_at, author: last.author } : null,
  };
}
