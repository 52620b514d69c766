/** Default event types per subject and terminal states, shared by both GitHub providers. */
import type { SvcEvent } from "../../core/plugin-api/index.js";
import { parseSubject } from "./subjects.js";

const PR_DEFAULTS = [
  "github.pull_request.*",
  "github.pull_request_review.*",
  "github.pull_request_review_comment.*",
  "github.issue_comment.*",
  "github.check_run.completed",
  "github.check_suite.completed",
  "github.workflow_run.completed",
];

const REPO_DEFAULTS = [
  "github.pull_request.*",
  "github.pull_request_review.submitted",
  "github.issue_comment.created",
  "github.push.pushed",
  "github.check_suite.completed",
  "github.workflow_run.completed",
];

const BRANCH_DEFAULTS = [
  "github.push.pushed",
  "github.check_run.completed",
  "github.check_suite.completed",
  "github.workflow_run.completed",
];

/** The types a clause watches when it names none. */
export function defaultTypes(subject: string): string[] {
  const ref = parseSubject(subject.replace(/\*$/, ""));
  if (ref?.number !== undefined) return [...PR_DEFAULTS];
  if (ref?.branch !== undefined) return [...BRANCH_DEFAULTS];
  return [...REPO_DEFAULTS];
}

/** A pull request (or issue) closed or merged is terminal for its `#n` subject. */
export function terminalSubjects(event: SvcEvent): string[] {
  if (event.type !== "github.pull_request.closed" && event.type !== "github.issues.closed") return [];
  return event.subjects.filter((s) => parseSubject(s)?.number !== undefined);
}
