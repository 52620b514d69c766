/** Every relative link of the README and docs/ names a file that exists and, with `#anchor`, a heading in it. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/paths.js";
import { docFiles, fencesOf } from "./doc-files.js";

/** GitHub's heading anchors: lower-case, punctuation dropped, spaces to hyphens. */
function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  let prose = text;
  for (const f of fencesOf(text)) prose = prose.replace(f.body, "");
  for (const m of prose.matchAll(/^#+ (.+)$/gm)) {
    out.add(
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replace(/ /g, "-"),
    );
  }
  return out;
}

describe("links in the docs resolve", () => {
  for (const file of docFiles()) {
    it(file, () => {
      const text = readFileSync(join(REPO_ROOT, file), "utf8");
      let prose = text;
      for (const f of fencesOf(text)) prose = prose.replace(f.body, "");
      const broken: string[] = [];
      for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const abs = path ? join(dirname(join(REPO_ROOT, file)), path) : join(REPO_ROOT, file);
        if (!existsSync(abs)) {
          broken.push(`${target} (no file ${relative(REPO_ROOT, abs)})`);
          continue;
        }
        if (anchor && abs.endsWith(".md") && !anchorsOf(readFileSync(abs, "utf8")).has(anchor))
          broken.push(`${target} (no heading #${anchor})`);
      }
      expect(broken, `${file} has broken links`).toEqual([]);
    });
  }
});
