import { describe, expect, it } from "vitest";
import {
  normalizeSubject,
  parseSubject,
  repoOfPattern,
  subjectFromPrUrl,
} from "../../../plugins/github-common/index.js";

describe("GitHub subjects", () => {
  it("parses pull request URLs into lower-cased #n subjects", () => {
    expect(subjectFromPrUrl("https://github.com/Acme-Org/API/pull/42")).toBe("github:acme-org/api#42");
    expect(subjectFromPrUrl("https://github.com/acme/api/pull/7/files?diff=split#r1")).toBe("github:acme/api#7");
  });

  it.each([
    "http://github.com/a/b/pull/1",
    "https://gitlab.com/a/b/pull/1",
    "https://github.com/a/b/issues/1",
    "https://github.com/a/pull/1",
    "not a url",
    "https://github.com/a/b/pull/x",
  ])("refuses %s with invalid_input", (url) => {
    expect(() => subjectFromPrUrl(url)).toThrow(expect.objectContaining({ code: "invalid_input" }));
  });

  it("parses subjects and the repository of prefix patterns", () => {
    expect(parseSubject("github:acme/api")).toEqual({ owner: "acme", repo: "api" });
    expect(parseSubject("github:acme/api#12")).toEqual({ owner: "acme", repo: "api", number: 12 });
    expect(parseSubject("github:acme/api@feature/x")).toEqual({ owner: "acme", repo: "api", branch: "feature/x" });
    expect(parseSubject("jira:ABC-1")).toBeUndefined();
    expect(repoOfPattern("github:acme/api#*")).toEqual({ owner: "acme", repo: "api" });
    expect(repoOfPattern("github:acme/api*")).toEqual({ owner: "acme", repo: "api" });
    expect(repoOfPattern("github:acme/*")).toBeUndefined();
    expect(normalizeSubject("github:Acme/API@Feature")).toBe("github:acme/api@Feature");
    expect(normalizeSubject("agent:X")).toBe("agent:X");
  });
});
