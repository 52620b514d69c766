/**
 * Every event GitHub sends maps to an svc event (issue 13, "MCP and GitHub"): the 58 event names
 * and 329 payloads of `@octokit/webhooks-examples`, the community's corpus of real deliveries.
 * The specific mappings keep their shapes; every other event gets the documented generic one.
 */
import examples from "@octokit/webhooks-examples";
import { describe, expect, it } from "vitest";
import {
  isValidEventId,
  SUBJECTS_PER_EVENT_MAX,
  SUBJECT_LENGTH_MAX,
  EVENT_TYPE_MAX,
} from "../../../core/plugin-api/limits.js";
import { GITHUB_EVENT_NAMES, mapGithubEvent } from "../../../plugins/github-common/map-event.js";
import { expectDocSection } from "../../support/readme.js";

interface Example {
  name: string;
  actions: string[];
  examples: Array<Record<string, any>>;
}

const CORPUS = examples as unknown as Example[];
const GUID = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
const opts = { id: GUID, fallbackTime: "2026-01-01T00:00:00Z" };

describe("@octokit/webhooks-examples: every payload maps", () => {
  it("covers the whole corpus (58 event names, 329 payloads at this version)", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(58);
    expect(CORPUS.reduce((n, e) => n + e.examples.length, 0)).toBeGreaterThanOrEqual(329);
  });

  for (const ex of CORPUS) {
    it(`${ex.name}: ${ex.examples.length} payload(s) become well-formed events`, () => {
      for (const payload of ex.examples) {
        const e = mapGithubEvent(ex.name, payload, opts);
        expect(e, `${ex.name} ${payload.action ?? ""}`).toBeDefined();
        expect(e!.type).toMatch(new RegExp(`^github\\.${ex.name}\\.[A-Za-z0-9_-]+$`));
        expect(e!.type.length).toBeLessThanOrEqual(EVENT_TYPE_MAX);
        expect(isValidEventId(e!.id)).toBe(true);
        expect(e!.subjects.length).toBeGreaterThan(0);
        expect(e!.subjects.length).toBeLessThanOrEqual(SUBJECTS_PER_EVENT_MAX);
        for (const s of e!.subjects) {
          expect(s).toMatch(/^github:/);
          expect(s.length).toBeLessThanOrEqual(SUBJECT_LENGTH_MAX);
        }
        if (typeof payload.action === "string") expect(e!.type.endsWith(`.${payload.action}`)).toBe(true);
        if (payload.repository?.full_name)
          expect(e!.subjects[0]).toBe(`github:${String(payload.repository.full_name).toLowerCase()}`);
        expect(JSON.stringify(e!.data).length).toBeLessThan(JSON.stringify(payload).length + 200);
      }
    });
  }

  it("keeps the specific mappings (pull requests keep their number subject and summary)", () => {
    const pr = CORPUS.find((e) => e.name === "pull_request")!.examples.find((p) => p.action === "opened")!;
    const e = mapGithubEvent("pull_request", pr, opts)!;
    expect(e.subjects[1]).toMatch(/^github:[^/]+\/[^#]+#\d+$/);
    expect(e.data).toMatchObject({ number: pr.number, title: pr.pull_request.title });
  });

  it("generic: issues get their number, branch refs their branch, organization events the org", () => {
    const issue = CORPUS.find((e) => e.name === "issues")!.examples[0]!;
    expect(mapGithubEvent("issues", issue, opts)!.subjects).toContain(
      `github:${issue.repository.full_name.toLowerCase()}#${issue.issue.number}`,
    );
    const create = CORPUS.find((e) => e.name === "create")!.examples.find((p) => p.ref_type === "branch");
    if (create)
      expect(mapGithubEvent("create", create, opts)!.subjects.some((s) => s.endsWith(`@${create.ref}`))).toBe(true);
    const org = CORPUS.find((e) => e.name === "organization")!.examples[0]!;
    expect(mapGithubEvent("organization", org, opts)!.subjects).toEqual([
      `github:${org.organization.login.toLowerCase()}`,
    ]);
  });

  it("docs/github.md lists every event and how it maps", async () => {
    const rows = CORPUS.map((e) => {
      const kind = (GITHUB_EVENT_NAMES as readonly string[]).includes(e.name) ? "specific" : "generic";
      const types = [...new Set(e.examples.map((p) => mapGithubEvent(e.name, p, opts)!.type))].sort();
      return `| \`${e.name}\` | ${kind} | ${types.map((t) => `\`${t}\``).join(", ")} |\n`;
    });
    await expectDocSection(
      "docs/github.md",
      "github-events",
      `| Event | Mapping | Types seen in the corpus |\n|---|---|---|\n${rows.join("")}`,
    );
  });
});
