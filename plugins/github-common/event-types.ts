/**
 * The GitHub MCP event types (`events/list`): one name per GitHub event family, `github.<event>`,
 * shared by the `local-gh` and `webhook` providers. Arguments select subjects — `repository`
 * (required), then a pull request, issue or discussion number or a branch where the family's
 * events carry one (docs/providers.md) — and `actions` the `github.<event>.<action>` types.
 * Families whose events concern an organization or account rather than a repository
 * (installation, membership, organization, ...) are not offered: svc registers repository hooks.
 */
import {
  defineEventType,
  eventArgumentError,
  TYPES_PER_CLAUSE_MAX,
  z,
  type ProviderEventType,
} from "../../core/plugin-api/index.js";
import { branchSubject, itemSubject, repoSubject } from "./subjects.js";
import * as data from "./payload-schemas.js";

/** The argument naming a family's `#n` subject. */
type NumberArg = "pullRequest" | "issue" | "discussion";

export interface GithubFamily {
  /** The GitHub event name (X-GitHub-Event). */
  event: string;
  /** What happened, for the description: "a pull request was opened, closed, ..." */
  about: string;
  number?: NumberArg;
  /** Whether its events carry a branch subject `@branch`. */
  branch?: boolean;
  /** Known actions (GitHub's own names; others are accepted); absent: the family has none (`pushed`/`occurred`). */
  actions?: readonly string[];
  payload?: z.ZodType;
}

/** The eight families with a specific mapping (map-event.ts), then the generic ones with a repository. */
export const GITHUB_FAMILIES: readonly GithubFamily[] = [
  {
    event: "pull_request",
    about:
      "a pull request was opened, closed or merged, reopened, pushed to (synchronize), edited, labeled, assigned, marked ready for review, ...",
    number: "pullRequest",
    payload: data.pullRequestData,
    actions: [
      "assigned",
      "auto_merge_disabled",
      "auto_merge_enabled",
      "closed",
      "converted_to_draft",
      "demilestoned",
      "dequeued",
      "edited",
      "enqueued",
      "labeled",
      "locked",
      "milestoned",
      "opened",
      "ready_for_review",
      "reopened",
      "review_request_removed",
      "review_requested",
      "synchronize",
      "unassigned",
      "unlabeled",
      "unlocked",
    ],
  },
  {
    event: "pull_request_review",
    about: "a pull request review was submitted, edited or dismissed",
    number: "pullRequest",
    payload: data.pullRequestReviewData,
    actions: ["submitted", "edited", "dismissed"],
  },
  {
    event: "pull_request_review_comment",
    about: "a review comment on a pull request's diff was created, edited or deleted",
    number: "pullRequest",
    payload: data.pullRequestReviewCommentData,
    actions: ["created", "edited", "deleted"],
  },
  {
    event: "issue_comment",
    about: "a comment on an issue or pull request was created, edited or deleted",
    number: "issue",
    payload: data.issueCommentData,
    actions: ["created", "edited", "deleted"],
  },
  {
    event: "check_run",
    about: "a check run was created, completed, rerequested, or had an action requested",
    number: "pullRequest",
    branch: true,
    payload: data.checkRunData,
    actions: ["created", "completed", "rerequested", "requested_action"],
  },
  {
    event: "check_suite",
    about: "a check suite was requested, rerequested or completed",
    number: "pullRequest",
    branch: true,
    payload: data.checkSuiteData,
    actions: ["requested", "rerequested", "completed"],
  },
  {
    event: "workflow_run",
    about: "a GitHub Actions workflow run was requested, started or completed",
    number: "pullRequest",
    branch: true,
    payload: data.workflowRunData,
    actions: ["requested", "in_progress", "completed"],
  },
  { event: "push", about: "commits were pushed to a branch or tag", branch: true, payload: data.pushData },
  {
    event: "branch_protection_rule",
    about: "a branch protection rule was created, edited or deleted",
    actions: ["created", "edited", "deleted"],
  },
  {
    event: "code_scanning_alert",
    about: "a code scanning alert was created, fixed, closed or reopened",
    branch: true,
    actions: ["appeared_in_branch", "closed_by_user", "created", "fixed", "reopened", "reopened_by_user"],
  },
  { event: "commit_comment", about: "a commit comment was created", actions: ["created"] },
  { event: "create", about: "a branch or tag was created", branch: true },
  { event: "delete", about: "a branch or tag was deleted", branch: true },
  {
    event: "dependabot_alert",
    about: "a Dependabot alert was created, dismissed, fixed, reintroduced or reopened",
    actions: ["created", "dismissed", "fixed", "reintroduced", "reopened"],
  },
  { event: "deploy_key", about: "a deploy key was added or removed", actions: ["created", "deleted"] },
  { event: "deployment", about: "a deployment was created", actions: ["created"] },
  {
    event: "deployment_review",
    about: "a deployment review was requested, approved or rejected",
    actions: ["requested", "approved", "rejected"],
  },
  { event: "deployment_status", about: "a deployment's status changed", actions: ["created"] },
  {
    event: "discussion",
    about: "a discussion was created, edited, answered, labeled, locked, pinned, transferred, ...",
    number: "discussion",
    actions: [
      "answered",
      "category_changed",
      "created",
      "deleted",
      "edited",
      "labeled",
      "locked",
      "pinned",
      "transferred",
      "unanswered",
      "unlabeled",
      "unlocked",
      "unpinned",
    ],
  },
  {
    event: "discussion_comment",
    about: "a discussion comment was created, edited or deleted",
    number: "discussion",
    actions: ["created", "edited", "deleted"],
  },
  { event: "fork", about: "the repository was forked" },
  { event: "gollum", about: "a wiki page was created or updated" },
  {
    event: "issues",
    about: "an issue was opened, closed, reopened, edited, labeled, assigned, milestoned, ...",
    number: "issue",
    actions: [
      "assigned",
      "closed",
      "deleted",
      "demilestoned",
      "edited",
      "labeled",
      "locked",
      "milestoned",
      "opened",
      "pinned",
      "reopened",
      "transferred",
      "unassigned",
      "unlabeled",
      "unlocked",
      "unpinned",
    ],
  },
  { event: "label", about: "a label was created, edited or deleted", actions: ["created", "edited", "deleted"] },
  { event: "member", about: "a collaborator was added, edited or removed", actions: ["added", "edited", "removed"] },
  {
    event: "merge_group",
    about: "a merge queue group requested checks (or was destroyed)",
    actions: ["checks_requested", "destroyed"],
  },
  { event: "meta", about: "the repository hook itself was deleted", actions: ["deleted"] },
  {
    event: "milestone",
    about: "a milestone was created, opened, closed, edited or deleted",
    actions: ["closed", "created", "deleted", "edited", "opened"],
  },
  { event: "package", about: "a package was published or updated", actions: ["published", "updated"] },
  { event: "page_build", about: "a GitHub Pages build ran" },
  {
    event: "project",
    about: "a classic project was created, edited, closed, reopened or deleted",
    actions: ["closed", "created", "deleted", "edited", "reopened"],
  },
  {
    event: "project_card",
    about: "a classic project card was created, edited, moved, converted or deleted",
    actions: ["converted", "created", "deleted", "edited", "moved"],
  },
  {
    event: "project_column",
    about: "a classic project column was created, edited, moved or deleted",
    actions: ["created", "deleted", "edited", "moved"],
  },
  { event: "public", about: "the repository was made public" },
  {
    event: "pull_request_review_thread",
    about: "a pull request review thread was resolved or unresolved",
    number: "pullRequest",
    actions: ["resolved", "unresolved"],
  },
  {
    event: "release",
    about: "a release was published, created, edited, released, prereleased, unpublished or deleted",
    actions: ["created", "deleted", "edited", "prereleased", "published", "released", "unpublished"],
  },
  {
    event: "repository",
    about: "the repository was created, renamed, transferred, archived, made public or private, edited or deleted",
    actions: [
      "archived",
      "created",
      "deleted",
      "edited",
      "privatized",
      "publicized",
      "renamed",
      "transferred",
      "unarchived",
    ],
  },
  {
    event: "repository_dispatch",
    about: "a repository_dispatch was sent through the API (its action is the sender's event_type)",
    actions: [],
  },
  { event: "repository_import", about: "a repository import finished" },
  {
    event: "repository_vulnerability_alert",
    about: "a vulnerability alert was created, dismissed or resolved",
    actions: ["create", "dismiss", "resolve"],
  },
  { event: "star", about: "the repository was starred or unstarred", actions: ["created", "deleted"] },
  { event: "status", about: "a commit status changed" },
  { event: "team_add", about: "a team was given access to the repository" },
  { event: "watch", about: "someone started watching (starring) the repository", actions: ["started"] },
  { event: "workflow_dispatch", about: "a workflow was run by hand (workflow_dispatch)", branch: true },
  {
    event: "workflow_job",
    about: "a GitHub Actions job was queued, started, waiting or completed",
    actions: ["queued", "in_progress", "waiting", "completed"],
  },
];

const REPOSITORY = /^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/;
const ACTION = /^[A-Za-z0-9_-]{1,100}$/;

/** A branch name as git accepts it (git check-ref-format, one level or more). */
export function isBranchName(b: string): boolean {
  if (b.length < 1 || b.length > 255) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(b) || b.includes("..") || b.includes("@{") || b === "@") return false;
  if (b.startsWith("-") || b.startsWith("/") || b.endsWith("/") || b.endsWith(".") || b.includes("//")) return false;
  return b.split("/").every((part) => !part.startsWith(".") && !part.endsWith(".lock"));
}

const NUMBER_WHAT: Record<NumberArg, string> = {
  pullRequest: "A pull request number: only its events",
  issue: "An issue or pull request number (GitHub numbers both in one sequence): only its events",
  discussion: "A discussion number: only its events",
};

function argumentsOf(f: GithubFamily) {
  const shape: Record<string, z.ZodType> = {
    repository: z
      .string()
      .regex(REPOSITORY, 'must be "owner/repo" (letters, digits, ".", "_" and "-"; at most 100 each)')
      .describe('The repository, "owner/repo" (case does not matter)'),
  };
  if (f.number)
    shape[f.number] = z
      .number()
      .int("must be an integer")
      .min(1, "must be 1 or more")
      .max(2_147_483_647, "must be at most 2147483647")
      .optional()
      .describe(NUMBER_WHAT[f.number]);
  if (f.branch) {
    shape.branch = z
      .string()
      .refine(
        isBranchName,
        'must be a git branch name (no spaces, control characters, ~ ^ : ? * [ \\ or ".."; 255 characters at most)',
      )
      .optional()
      .describe(`A branch name, e.g. main: only events about that branch${f.number ? ` (not with ${f.number})` : ""}`);
  }
  if (f.actions) {
    shape.actions = z
      .array(z.string().regex(ACTION, "must be an action name (letters, digits, _ and -)"))
      .min(1, "give at least one action, or omit actions for all")
      .max(TYPES_PER_CLAUSE_MAX, `at most ${TYPES_PER_CLAUSE_MAX} actions`)
      .refine((a) => new Set(a).size === a.length, "must not repeat an action")
      .optional()
      .describe(`Only these actions (default: all)${f.actions.length ? `. Known: ${f.actions.join(", ")}` : ""}`);
  }
  return z.strictObject(shape);
}

function subjectsText(f: GithubFamily): string {
  const parts = ["the repository"];
  if (f.number)
    parts.push(
      f.number === "pullRequest"
        ? "the pull request"
        : f.number === "discussion"
          ? "the discussion"
          : "the issue or pull request",
    );
  if (f.branch) parts.push("the branch");
  return parts.join(", ");
}

/** The event type of one family, e.g. `github.pull_request`. */
export function githubEventType(
  f: GithubFamily,
  opts: { preferWhenReady?: string; actions?: readonly string[] } = {},
): ProviderEventType {
  const family = opts.actions ? { ...f, actions: opts.actions } : f;
  const name = `github.${f.event}`;
  const args = argumentsOf(family);
  const allowed = opts.actions;
  return defineEventType({
    name,
    description: `GitHub ${f.event} events of a repository: ${f.about}. Type github.${f.event}.<action>; subjects: ${subjectsText(f)}.`,
    arguments: args,
    payload: f.payload ?? data.genericData,
    ...(opts.preferWhenReady ? { preferWhenReady: opts.preferWhenReady } : {}),
    match(a: Record<string, any>) {
      const [owner, repo] = (a.repository as string).split("/") as [string, string];
      const n = f.number ? (a[f.number] as number | undefined) : undefined;
      const branch = a.branch as string | undefined;
      if (n !== undefined && branch !== undefined) {
        throw eventArgumentError(
          name,
          "branch",
          `give ${f.number} or branch, not both (an event matches when any one of its subjects does, so both would widen the subscription, not narrow it)`,
        );
      }
      const actions = a.actions as string[] | undefined;
      const refused = allowed && actions?.find((x) => !allowed.includes(x));
      if (refused)
        throw eventArgumentError(
          name,
          "actions",
          `"${refused}" is not delivered by this provider; allowed: ${allowed.join(", ")}`,
        );
      const subject =
        n !== undefined
          ? itemSubject(owner, repo, n)
          : branch !== undefined
            ? branchSubject(owner, repo, branch)
            : repoSubject(owner, repo);
      const types =
        actions?.map((x) => `github.${f.event}.${x}`) ??
        (allowed ? allowed.map((x) => `github.${f.event}.${x}`) : [`github.${f.event}.*`]);
      return [{ subject, types }];
    },
  });
}

/**
 * The event types of the given families (default every one), for a provider's `eventTypes`.
 * `restrict` narrows a family's actions to those the provider delivers (e.g. local-gh sees only
 * completed check runs).
 */
export function githubEventTypes(
  opts: { only?: readonly string[]; restrict?: Record<string, readonly string[]>; preferWhenReady?: string } = {},
): ProviderEventType[] {
  const families = opts.only ? GITHUB_FAMILIES.filter((f) => opts.only!.includes(f.event)) : GITHUB_FAMILIES;
  return families.map((f) =>
    githubEventType(f, {
      ...(opts.preferWhenReady ? { preferWhenReady: opts.preferWhenReady } : {}),
      ...(opts.restrict?.[f.event] ? { actions: opts.restrict[f.event] } : {}),
    }),
  );
}
