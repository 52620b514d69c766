import fc from "fast-check";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { SentinelIndex, type IndexedClause } from "../../../core/sentinels/matcher.js";

/** The reference: every clause of every sentinel, checked one by one. */
function reference(clauses: IndexedClause[], event: { type: string; subjects: string[] }): Set<string> {
  const out = new Set<string>();
  for (const c of clauses) {
    const subjectOk = event.subjects.some((s) =>
      c.subject.endsWith("*") ? s.startsWith(c.subject.slice(0, -1)) : s === c.subject,
    );
    const typeOk = c.types.some((g) => g === "*" || picomatch.isMatch(event.type, g, { dot: true }));
    if (subjectOk && typeOk) out.add(c.sentinelId);
  }
  return out;
}

const segment = fc.constantFrom("a", "b", "ab", "repo", "x#1", "x#12", ":", "/", "é");
const subject = fc.array(segment, { minLength: 1, maxLength: 4 }).map((p) => p.join(""));
const clauseSubject = fc.oneof(
  subject,
  subject.map((s) => s + "*"),
  fc.constant("*"),
);
const type = fc
  .array(fc.constantFrom("ci", "build", "done", "pr", "x"), { minLength: 1, maxLength: 3 })
  .map((p) => p.join("."));
const glob = fc.oneof(
  type,
  fc.constant("*"),
  type.map((t) => t.split(".")[0] + ".*"),
  fc.constant("ci.{build,pr}.*"),
);
const clauseArb = (id: string) =>
  fc
    .record({ subject: clauseSubject, types: fc.array(glob, { minLength: 1, maxLength: 3 }) })
    .map((c) => ({ sentinelId: id, ...c }));
const sentinels = fc
  .uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 25 })
  .chain((ids) => fc.tuple(...ids.map((i) => fc.array(clauseArb(`snt_${i}`), { minLength: 1, maxLength: 3 }))));
const eventArb = fc.record({ type, subjects: fc.array(subject, { minLength: 1, maxLength: 3 }) });

describe("indexed matcher", () => {
  it("agrees with the reference implementation (fast-check)", () => {
    fc.assert(
      fc.property(sentinels, fc.array(eventArb, { minLength: 1, maxLength: 5 }), (groups, events) => {
        const index = new SentinelIndex();
        for (const g of groups) index.add(g[0]!.sentinelId, g);
        const all = groups.flat();
        for (const e of events) expect(index.match(e)).toEqual(reference(all, e));
      }),
      { numRuns: 300 },
    );
  });

  it("agrees with the reference after removals and re-adds", () => {
    fc.assert(
      fc.property(sentinels, fc.array(fc.nat(), { maxLength: 10 }), eventArb, (groups, removals, e) => {
        const index = new SentinelIndex();
        for (const g of groups) index.add(g[0]!.sentinelId, g);
        const removed = new Set<string>();
        for (const r of removals) {
          if (!groups.length) break;
          const id = groups[r % groups.length]![0]!.sentinelId;
          index.remove(id);
          removed.add(id);
        }
        for (const g of groups.slice(0, 2)) {
          index.add(g[0]!.sentinelId, g);
          removed.delete(g[0]!.sentinelId);
        }
        const live = groups.flat().filter((c) => !removed.has(c.sentinelId));
        expect(index.match(e)).toEqual(reference(live, e));
        expect(index.size).toBe(groups.length - removed.size);
      }),
      { numRuns: 300 },
    );
  });

  it("matches exact subjects, `*` prefixes against any subject of the hierarchy, and type globs", () => {
    const index = new SentinelIndex();
    index.add("pr", [{ sentinelId: "pr", subject: "github:acme/api#42", types: ["github.pull_request.*"] }]);
    index.add("repo", [{ sentinelId: "repo", subject: "github:acme/*", types: ["*"] }]);
    index.add("all", [{ sentinelId: "all", subject: "*", types: ["github.push"] }]);
    const e = { type: "github.pull_request.closed", subjects: ["github:acme/api", "github:acme/api#42"] };
    expect([...index.match(e)].sort()).toEqual(["pr", "repo"]);
    expect([...index.match({ type: "github.push", subjects: ["github:other/x"] })]).toEqual(["all"]);
    expect([...index.match({ type: "github.pull_request.closed", subjects: ["github:acme/api#4"] })]).toEqual(["repo"]);
  });

  it("treats only a trailing `*` as a prefix marker", () => {
    const index = new SentinelIndex();
    index.add("lit", [{ sentinelId: "lit", subject: "a*b", types: ["*"] }]);
    expect(index.match({ type: "t", subjects: ["axb"] }).size).toBe(0);
    expect(index.match({ type: "t", subjects: ["a*b"] }).size).toBe(1);
  });
});
