/**
 * The GitHub MCP event types (`events/list`, issue 27): one per event family, whose arguments give
 * clauses the engine accepts and that match exactly the events the shared mapper makes for them.
 */
import examples from "@octokit/webhooks-examples";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SvcError } from "../../../core/errors.js";
import { SentinelIndex, typeMatcher } from "../../../core/sentinels/matcher.js";
import { sentinelSpecSchema } from "../../../core/sentinels/spec-schema.js";
import {
  GITHUB_FAMILIES,
  githubEventTypes,
  isBranchName,
  mapGithubEvent,
  resolveGithubSubject,
  type GithubFamily,
} from "../../../plugins/github-common/index.js";
import { LOCAL_GH_TYPES } from "../../../plugins/local-gh/index.js";
import { undeclaredKeys, undescribedProperties } from "../../support/json-schema.js";

interface Example {
  name: string;
  examples: Array<Record<string, any>>;
}
const CORPUS = examples as unknown as Example[];
const opts = { id: "72d3162e-cc78-11e3-81ab-4c9367dc0958", fallbackTime: "2026-01-01T00:00:00Z" };
const TYPES = githubEventTypes();
const typeOf = (event: string) => TYPES.find((t) => t.name === `github.${event}`)!;

/** A webhook payload of family `f` about `repo`, pull request/issue/discussion `n` or `branch`. */
function payloadFor(
  f: GithubFamily,
  a: { repo: string; n?: number; branch?: string; action?: string },
): Record<string, any> {
  const prs = a.n === undefined ? [] : [{ number: a.n }];
  const base: Record<string, any> = {
    repository: { full_name: a.repo },
    sender: { login: "octocat" },
    ...(a.action ? { action: a.action } : {}),
  };
  switch (f.event) {
    case "pull_request":
      return { ...base, number: a.n ?? 1, pull_request: { number: a.n ?? 1 } };
    case "pull_request_review":
    case "pull_request_review_comment":
      return { ...base, pull_request: { number: a.n ?? 1 } };
    case "issue_comment":
      return { ...base, issue: { number: a.n ?? 1 }, comment: {} };
    case "check_run":
      return { ...base, check_run: { pull_requests: prs, check_suite: { head_branch: a.branch ?? "main" } } };
    case "check_suite":
      return { ...base, check_suite: { pull_requests: prs, head_branch: a.branch ?? "main" } };
    case "workflow_run":
      return { ...base, workflow_run: { pull_requests: prs, head_branch: a.branch ?? "main" } };
    default: {
      const key = f.number === "issue" ? "issue" : f.number === "discussion" ? "discussion" : "pull_request";
      return {
        ...base,
        ...(a.n !== undefined ? { [key]: { number: a.n } } : {}),
        ...(a.branch !== undefined ? { ref: `refs/heads/${a.branch}` } : {}),
      };
    }
  }
}

const name = fc.stringMatching(/^[A-Za-z0-9_.-]{1,24}$/);
const branch = fc
  .oneof(fc.stringMatching(/^[A-Za-z0-9._/-]{1,40}$/), fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }))
  .filter(isBranchName);
const action = fc.stringMatching(/^[a-z_]{1,20}$/);

/** Valid arguments of `f` and the values they stand for. */
function validArgs(f: GithubFamily) {
  return fc
    .record(
      {
        owner: name,
        repo: name,
        n: f.number
          ? fc.option(fc.integer({ min: 1, max: 2_147_483_647 }), { nil: undefined })
          : fc.constant(undefined),
        branch: f.branch ? fc.option(branch, { nil: undefined }) : fc.constant(undefined),
        actions: f.actions
          ? fc.option(fc.uniqueArray(action, { minLength: 1, maxLength: 5 }), { nil: undefined })
          : fc.constant(undefined),
      },
      { requiredKeys: ["owner", "repo", "n", "branch", "actions"] },
    )
    .filter((v) => v.n === undefined || v.branch === undefined);
}

describe("GitHub event types: one per family", () => {
  it("offers the eight specific families and every generic family whose events concern a repository", () => {
    const offered = new Set(GITHUB_FAMILIES.map((f) => f.event));
    const withRepo = CORPUS.filter((e) => e.examples.some((p) => p.repository?.full_name)).map((e) => e.name);
    // ping is answered by the webhook provider, never ingested; team events come only to organization hooks.
    expect(withRepo.filter((n) => !offered.has(n)).sort()).toEqual(["ping", "team"]);
    expect(TYPES.map((t) => t.name)).toEqual(GITHUB_FAMILIES.map((f) => `github.${f.event}`));
    for (const t of TYPES) expect(t.name).toMatch(/^github\.[a-z_]+$/);
  });

  it("describes every argument and payload field, and refuses unknown arguments in its schema", () => {
    for (const t of TYPES) {
      expect(t.inputSchema, t.name).toMatchObject({
        type: "object",
        additionalProperties: false,
        required: ["repository"],
      });
      expect(undescribedProperties(t.inputSchema), t.name).toEqual([]);
      expect(undescribedProperties(t.payloadSchema), t.name).toEqual([]);
      expect(t.payloadSchema, t.name).not.toHaveProperty("$schema");
    }
  });

  it("declares the subjects each family's events carry: none of the corpus carries one its arguments cannot select", () => {
    for (const f of GITHUB_FAMILIES) {
      for (const payload of CORPUS.find((e) => e.name === f.event)?.examples ?? []) {
        const e = mapGithubEvent(f.event, payload, opts)!;
        if (e.subjects.some((s) => s.includes("#"))) expect(f.number, `${f.event} carries #n`).toBeDefined();
        if (e.subjects.some((s) => /@/.test(s.slice(7)))) expect(f.branch, `${f.event} carries @branch`).toBe(true);
      }
    }
  });

  it("publishes each family's payload: every corpus payload's data is declared by its schema", () => {
    for (const f of GITHUB_FAMILIES) {
      const t = typeOf(f.event);
      for (const payload of CORPUS.find((e) => e.name === f.event)?.examples ?? []) {
        if (!payload.repository?.full_name) continue;
        const e = mapGithubEvent(f.event, payload, opts)!;
        expect(undeclaredKeys(e.data, t.payloadSchema), `${f.event} ${payload.action ?? ""}`).toEqual([]);
        if (f.actions?.length) expect(f.actions, `${f.event} knows action ${payload.action}`).toContain(payload.action);
      }
    }
  });

  for (const f of GITHUB_FAMILIES) {
    it(`github.${f.event}: every valid argument set gives one clause the engine accepts, matching exactly the events it names`, () => {
      const t = typeOf(f.event);
      fc.assert(
        fc.property(validArgs(f), (v) => {
          const args = {
            repository: `${v.owner}/${v.repo}`,
            ...(v.n !== undefined ? { [f.number!]: v.n } : {}),
            ...(v.branch !== undefined ? { branch: v.branch } : {}),
            ...(v.actions ? { actions: v.actions } : {}),
          };
          const match = t.toMatch(args);
          expect(match).toHaveLength(1);
          const parsed = sentinelSpecSchema.safeParse({
            match,
            until: { kind: "never" },
            target: { kind: "test" },
            provider: "webhook",
          });
          expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
          // The engine's subject normalization leaves it as it is.
          expect(resolveGithubSubject({ subject: match[0]!.subject })).toBe(match[0]!.subject);
          const index = new SentinelIndex();
          index.add("s", [{ sentinelId: "s", subject: match[0]!.subject, types: match[0]!.types! }]);
          const act = v.actions?.[0] ?? f.actions?.[0];
          const hit = mapGithubEvent(
            f.event,
            payloadFor(f, { repo: `${v.owner}/${v.repo}`, n: v.n, branch: v.branch, action: act }),
            opts,
          )!;
          expect(index.match(hit).has("s"), `${JSON.stringify(hit)} vs ${JSON.stringify(match)}`).toBe(true);
          const otherRepo = mapGithubEvent(
            f.event,
            payloadFor(f, { repo: `${v.owner}/${v.repo}x`, n: v.n, branch: v.branch, action: act }),
            opts,
          )!;
          expect(index.match(otherRepo).size).toBe(0);
          if (v.n !== undefined)
            expect(
              index.match(
                mapGithubEvent(
                  f.event,
                  payloadFor(f, { repo: `${v.owner}/${v.repo}`, n: v.n + 1, action: act }),
                  opts,
                )!,
              ).size,
            ).toBe(0);
          if (v.branch !== undefined)
            expect(
              index.match(
                mapGithubEvent(
                  f.event,
                  payloadFor(f, { repo: `${v.owner}/${v.repo}`, branch: `${v.branch}-x`, action: act }),
                  opts,
                )!,
              ).size,
            ).toBe(0);
          if (v.actions)
            expect(typeMatcher(match[0]!.types!)(`github.${f.event}.not_${v.actions.join("_")}`)).toBe(false);
        }),
        { numRuns: 60 },
      );
    });
  }
});

describe("GitHub event types: invalid arguments are refused, naming the argument and what is allowed", () => {
  const refused = (event: string, args: unknown): SvcError => {
    try {
      typeOf(event).toMatch(args as Record<string, unknown>);
    } catch (err) {
      expect(SvcError.is(err) && err.code).toBe("invalid_input");
      return err as SvcError;
    }
    throw new Error(`accepted ${JSON.stringify(args)}`);
  };

  it.each([
    ["pull_request", {}, /repository: is required: The repository, "owner\/repo"/],
    ["pull_request", { repository: "acme" }, /repository: must be "owner\/repo"/],
    [
      "pull_request",
      { repository: "acme/api", branch: "main" },
      /branch: is not an argument of github\.pull_request; its arguments are repository, pullRequest, actions/,
    ],
    [
      "push",
      { repository: "acme/api", pullRequest: 3 },
      /pullRequest: is not an argument of github\.push; its arguments are repository, branch/,
    ],
    ["pull_request", { repository: "acme/api", pullRequest: 1.5 }, /pullRequest: must be an integer/],
    ["pull_request", { repository: "acme/api", pullRequest: 0 }, /pullRequest: must be 1 or more/],
    ["push", { repository: "acme/api", branch: "a..b" }, /branch: must be a git branch name/],
    [
      "check_run",
      { repository: "acme/api", pullRequest: 4, branch: "main" },
      /branch: give pullRequest or branch, not both/,
    ],
    ["issues", { repository: "acme/api", actions: ["op ened"] }, /actions\[0\]: must be an action name/],
    ["issues", { repository: "acme/api", actions: [] }, /actions: give at least one action, or omit actions for all/],
    ["issues", { repository: "acme/api", actions: ["opened", "opened"] }, /actions: must not repeat an action/],
    [
      "fork",
      { repository: "acme/api", actions: ["created"] },
      /actions: is not an argument of github\.fork; its arguments are repository$/,
    ],
  ])("%s %j", (event, args, message) => {
    expect(refused(event, args).message).toMatch(message);
  });

  it("refuses any unknown argument by name (property)", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][A-Za-z]{0,15}$/).filter((k) => !["repository", "pullRequest", "actions"].includes(k)),
        (key) => {
          expect(refused("pull_request", { repository: "acme/api", [key]: 1 }).message).toContain(
            `${key}: is not an argument of github.pull_request`,
          );
        },
      ),
    );
  });

  it("refuses any repository that is not owner/repo (property)", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/.test(s)),
        (repository) => {
          expect(refused("push", { repository }).message).toMatch(
            /^invalid arguments for github\.push: repository: must be "owner\/repo"/,
          );
        },
      ),
    );
  });

  it("local-gh offers only what its polling sees: completed check runs, no workflow runs", () => {
    const local = LOCAL_GH_TYPES();
    expect(local.map((t) => t.name).sort()).toEqual([
      "github.check_run",
      "github.issue_comment",
      "github.pull_request",
      "github.pull_request_review",
      "github.pull_request_review_comment",
      "github.push",
    ]);
    const checkRun = local.find((t) => t.name === "github.check_run")!;
    expect(checkRun.toMatch({ repository: "Acme/API", pullRequest: 7 })).toEqual([
      { subject: "github:acme/api#7", types: ["github.check_run.completed"] },
    ]);
    expect(() => checkRun.toMatch({ repository: "acme/api", actions: ["created"] })).toThrow(
      /actions: "created" is not delivered by this provider; allowed: completed/,
    );
  });
});
