/**
 * The `data` of GitHub events as map-event.ts builds it, as zod schemas (published as the
 * `payloadSchema` of each GitHub event type in `events/list`). A test parses every mapped payload
 * of the `@octokit/webhooks-examples` corpus with them and checks that no field goes undescribed.
 */
import { z } from "../../core/plugin-api/index.js";

const text = (d: string) => z.string().nullable().optional().describe(d);
const id = (d: string) => z.number().nullable().optional().describe(d);

/** Fields every GitHub event's data has. */
const common = {
  event: z.string().describe("The GitHub event name (the X-GitHub-Event header), e.g. pull_request"),
  action: z.string().describe('The action, e.g. opened; "pushed" for pushes, "occurred" for an event without one'),
  repository: z.string().describe('The repository, "owner/repo" (lower-cased)'),
  sender: z.string().nullable().describe("Login of the account that caused the event"),
};

const number = z.number().int().describe("The pull request (or issue) number");

export const pullRequestData = z.object({
  ...common,
  number,
  title: text("Title of the pull request"),
  state: text("open or closed"),
  merged: z.boolean().describe("Whether the pull request is merged"),
  draft: z.boolean().describe("Whether it is a draft"),
  author: text("Login of its author"),
  url: text("Its web URL"),
  head: z.object({ ref: text("Head branch"), sha: text("Head commit SHA") }).describe("The head (source) branch"),
  base: z.object({ ref: text("Base branch") }).describe("The base (target) branch"),
  closedAt: text("ISO time it was closed, or null"),
  mergedAt: text("ISO time it was merged, or null"),
});

export const pullRequestReviewData = z.object({
  ...common,
  number,
  review: z
    .object({
      id: id("Review id"),
      state: text("approved, changes_requested, commented or dismissed"),
      author: text("Login of the reviewer"),
      body: text("Review body (clipped to 2000 characters)"),
      url: text("Web URL of the review"),
      commit: text("Commit SHA the review is on"),
    })
    .describe("The review"),
});

export const pullRequestReviewCommentData = z.object({
  ...common,
  number,
  comment: z
    .object({
      id: id("Comment id"),
      author: text("Login of the commenter"),
      body: text("Comment body (clipped to 2000 characters)"),
      path: text("File the comment is on"),
      line: id("Line the comment is on, or null"),
      url: text("Web URL of the comment"),
      reviewId: id("Id of the review it belongs to"),
    })
    .describe("The review comment"),
});

export const issueCommentData = z.object({
  ...common,
  number: z.number().int().describe("The issue or pull request number"),
  isPullRequest: z.boolean().describe("Whether the number is a pull request's"),
  title: text("Title of the issue or pull request"),
  comment: z
    .object({
      id: id("Comment id"),
      author: text("Login of the commenter"),
      body: text("Comment body (clipped to 2000 characters)"),
      url: text("Web URL of the comment"),
    })
    .describe("The comment"),
});

const status = text("queued, in_progress, completed, ...");
const conclusion = text(
  "success, failure, neutral, cancelled, skipped, timed_out, action_required, or null while not completed",
);
const headSha = text("Head commit SHA");

export const checkRunData = z.object({
  ...common,
  checkRun: z
    .object({
      id: id("Check run id"),
      name: text("Check name"),
      status,
      conclusion,
      headSha,
      url: text("Web URL of the check run"),
    })
    .describe("The check run"),
});

export const checkSuiteData = z.object({
  ...common,
  checkSuite: z
    .object({ id: id("Check suite id"), app: text("Slug of the app that runs it"), status, conclusion, headSha })
    .describe("The check suite"),
});

export const workflowRunData = z.object({
  ...common,
  workflowRun: z
    .object({
      id: id("Workflow run id"),
      name: text("Workflow name"),
      runNumber: id("Run number"),
      attempt: id("Attempt number"),
      event: text("Event that triggered the run, e.g. push"),
      status,
      conclusion,
      headSha,
      url: text("Web URL of the run"),
    })
    .describe("The workflow run"),
});

export const pushData = z.object({
  ...common,
  ref: z.string().describe("The full ref pushed, e.g. refs/heads/main"),
  before: text("Commit SHA before the push"),
  after: text("Commit SHA after the push"),
  forced: z.boolean().describe("Whether it was a force push"),
  created: z.boolean().describe("Whether the push created the ref"),
  deleted: z.boolean().describe("Whether the push deleted the ref"),
  commits: z.number().int().describe("Number of commits pushed"),
  headCommit: z
    .object({
      id: z.string().describe("Commit SHA"),
      message: text("Commit message (clipped to 500 characters)"),
      author: text("Author's username or name"),
    })
    .nullable()
    .describe("The newest commit, or null"),
  compare: text("Web URL comparing before and after"),
});

/** The generic mapping's data (every family without a specific one). */
export const genericData = z.object({
  ...common,
  number: z.number().int().optional().describe("The issue, pull request or discussion number it concerns, if any"),
  ref: z.string().optional().describe("The ref it concerns (a branch, tag or full ref), if any"),
  url: z.string().optional().describe("Web URL of the object the event is about, if any"),
});
