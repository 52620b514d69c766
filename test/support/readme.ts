/**
 * Generated doc sections live between `<!-- name:start -->` and `<!-- name:end -->` markers in a
 * file under docs/ (or the README). A docs test compares each with its generator; `npm run docs`
 * (UPDATE_DOCS=1) rewrites them.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { REPO_ROOT } from "./paths.js";

export const README = join(REPO_ROOT, "README.md");

export function sectionOf(text: string, name: string): string {
  const start = `<!-- ${name}:start -->\n`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`no ${name} markers`);
  return text.slice(i + start.length, j);
}

export function replaceSection(text: string, name: string, content: string): string {
  const start = `<!-- ${name}:start -->\n`;
  const end = `<!-- ${name}:end -->`;
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`no ${name} markers`);
  return text.slice(0, i + start.length) + content + text.slice(j);
}

/** Asserts the section of `file` (relative to the repo) equals `generated`; rewrites it instead when UPDATE_DOCS=1. */
export async function expectDocSection(file: string, name: string, generated: string): Promise<void> {
  const path = join(REPO_ROOT, file);
  const text = await readFile(path, "utf8");
  if (process.env.UPDATE_DOCS === "1") {
    await writeFile(path, replaceSection(text, name, generated));
    return;
  }
  expect(sectionOf(text, name), `${file} section ${name} is out of date: run \`npm run docs\``).toBe(generated);
}
