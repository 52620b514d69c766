import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { defaultTypes, mapGithubEvent, terminalSubjects } from "../../../plugins/github-common/index.js";

const payload = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./payloads/${name}.json`, import.meta.url), "utf8"));
const opts = { id: "72d3162e-cc78-11e3-81ab-4c9367dc0958", fallbackTime: "2026-01-10T12:00:00.000Z" };
const REPO = "github:acme-org/api";
const PR = "github:acme-org/api#42";

describe("mapGithubEvent (recorded payload shapes)", () => {
  it.each([
    ["pull_request", "pull_request.opened", "github.pull_request.opened", [REPO, PR], "2026-01-10T09:10:00Z"],
    ["pull_request", "pull_request.closed-merged", "github.pull_request.closed", [REPO, PR], "2026-01-10T10:00:00Z"],
    [
      "pull_request_review",
      "pull_request_review.submitted",
      "github.pull_request_review.submitted",
      [REPO, PR],
      "2026-01-10T09:30:00Z",
    ],
    [
      "pull_request_review_comment",
      "pull_request_review_comment.created",
      "github.pull_request_review_comment.created",
      [REPO, PR],
      "2026-01-10T09:29:00Z",
    ],
    ["issue_comment", "issue_comment.created", "github.issue_comment.created", [REPO, PR], "2026-01-10T09:40:00Z"],
    [
      "check_run",
      "check_run.completed",
      "github.check_run.completed",
      [REPO, PR, `${REPO}@retry`],
      "2026-01-10T09:15:00Z",
    ],
    [
      "check_suite",
      "check_suite.completed",
      "github.check_suite.completed",
      [REPO, PR, `${REPO}@retry`],
      "2026-01-10T09:20:00Z",
    ],
    [
      "workflow_run",
      "workflow_run.completed",
      "github.workflow_run.completed",
      [REPO, PR, `${REPO}@retry`],
      "2026-01-10T09:21:00Z",
    ],
    ["push", "push.main", "github.push.pushed", [REPO, `${REPO}@main`], "2026-01-10T10:00:00Z"],
  ])("%s (%s) → %s", (name, file, type, subjects, time) => {
    const e = mapGithubEvent(name, payload(file), opts)!;
    expect(e.type).toBe(type);
    expect(e.subjects).toEqual(subjects);
    expect(e.time).toBe(time);
    expect(e.id).toBe(opts.id);
    expect(e.data).toMatchObject({ event: name, repository: "Acme-Org/API" });
  });

  it("summarizes the data (merged flag, review state, check conclusion, push head) without the whole payload", () => {
    expect(mapGithubEvent("pull_request", payload("pull_request.closed-merged"), opts)!.data).toMatchObject({
      number: 42,
      state: "closed",
      merged: true,
      author: "octocat",
      url: "https://github.com/Acme-Org/API/pull/42",
      head: { ref: "retry", sha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821" },
    });
    expect(mapGithubEvent("pull_request", payload("pull_request.closed-unmerged"), opts)!.data).toMatchObject({
      merged: false,
    });
    expect(mapGithubEvent("pull_request_review", payload("pull_request_review.submitted"), opts)!.data).toMatchObject({
      review: { state: "approved", author: "reviewer" },
    });
    expect(mapGithubEvent("check_run", payload("check_run.completed"), opts)!.data).toMatchObject({
      checkRun: { name: "test (20.x)", conclusion: "failure" },
    });
    const push = mapGithubEvent("push", payload("push.main"), opts)!;
    expect(push.data).toMatchObject({ ref: "refs/heads/main", commits: 1, headCommit: { author: "octocat" } });
    expect(JSON.stringify(push.data)).not.toContain("tree_id");
    expect(JSON.stringify(push.data)).not.toContain("octocat@example.com");
  });

  it("maps every other event generically; only a non-object payload or a bad name is not mapped", () => {
    expect(
      mapGithubEvent(
        "star",
        { action: "created", repository: { full_name: "Octo/Cat" }, sender: { login: "x" } },
        opts,
      ),
    ).toMatchObject({ type: "github.star.created", subjects: ["github:octo/cat"] });
    expect(mapGithubEvent("fork", { repository: { full_name: "o/r" } }, opts)).toMatchObject({
      type: "github.fork.occurred",
    });
    expect(mapGithubEvent("pull_request", { action: "opened", repository: { full_name: "a/b" } }, opts)).toMatchObject({
      type: "github.pull_request.opened",
      subjects: ["github:a/b"],
    });
    expect(mapGithubEvent("membership", { action: "added", organization: { login: "Acme" } }, opts)).toMatchObject({
      type: "github.membership.added",
      subjects: ["github:acme"],
    });
    expect(mapGithubEvent("security_advisory", { action: "published", security_advisory: {} }, opts)).toMatchObject({
      subjects: ["github:security_advisory"],
    });
    expect(mapGithubEvent("pull_request", null, opts)).toBeUndefined();
    expect(mapGithubEvent("Bad Name", payload("push.main"), opts)).toBeUndefined();
  });

  it("ids never contain '.', and the fallback time applies when the payload has none", () => {
    const e = mapGithubEvent(
      "check_suite",
      { action: "requested", check_suite: {}, repository: { full_name: "A/B" } },
      { id: "gh.poll.1", fallbackTime: opts.fallbackTime },
    )!;
    expect(e.id).toBe("gh-poll-1");
    expect(e.time).toBe(opts.fallbackTime);
    expect(e.subjects).toEqual(["github:a/b"]);
  });

  it("never throws and always yields well-formed types on arbitrary payloads", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("pull_request", "issue_comment", "check_run", "push", "workflow_run"),
        fc.anything(),
        fc.string(),
        (name, body, action) => {
          const p =
            typeof body === "object" && body !== null && !Array.isArray(body)
              ? { ...body, action, repository: { full_name: "o/r" } }
              : body;
          const e = mapGithubEvent(name, p, opts);
          if (e) {
            expect(e.type).toMatch(/^github\.[a-z_]+\.[A-Za-z0-9_-]+$/);
            expect(e.subjects[0]).toBe("github:o/r");
          }
        },
      ),
    );
  });
});

describe("vocabulary", () => {
  it("a closed pull request is terminal for its #n subject only", () => {
    expect(terminalSubjects(mapGithubEvent("pull_request", payload("pull_request.closed-merged"), opts)!)).toEqual([
      PR,
    ]);
    expect(terminalSubjects(mapGithubEvent("pull_request", payload("pull_request.opened"), opts)!)).toEqual([]);
    expect(terminalSubjects(mapGithubEvent("issue_comment", payload("issue_comment.created"), opts)!)).toEqual([]);
  });

  it("default types depend on the subject's kind", () => {
    expect(defaultTypes(PR)).toContain("github.pull_request_review.*");
    expect(defaultTypes(REPO)).toContain("github.push.pushed");
    expect(defaultTypes(REPO)).not.toContain("github.check_run.completed");
    expect(defaultTypes(`${REPO}@main`)).toEqual(
      expect.arrayContaining(["github.push.pushed", "github.workflow_run.completed"]),
    );
    expect(defaultTypes("github:acme-org/*")).toEqual(defaultTypes(REPO));
  });
});
