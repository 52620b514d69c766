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

/**
 * The hand-written walk-through of docs/writing-an-adapter.md, followed to the letter: its
 * ```lang file=<name> blocks written into `dir`, then what its steps install (TypeScript, Node's
 * types and the types-only @svc/plugin-api, linked from svc's own copies instead of the registry)
 * and its build. Returns the file names written.
 */
export async function buildAdapterWalkthrough(dir: string): Promise<string[]> {
  const { mkdir, symlink } = await import("node:fs/promises");
  const { dirname } = await import("node:path");
  const { execFileSync } = await import("node:child_process");
  const doc = await readFile(join(REPO_ROOT, "docs/writing-an-adapter.md"), "utf8");
  const names: string[] = [];
  for (const m of doc.matchAll(/```\w+ file=(\S+)\n([\s\S]*?)```/g)) {
    await mkdir(dirname(join(dir, m[1]!)), { recursive: true });
    await writeFile(join(dir, m[1]!), m[2]!);
    names.push(m[1]!);
  }
  const nm = join(dir, "node_modules");
  await mkdir(join(nm, "@svc"), { recursive: true });
  await mkdir(join(nm, "@types"), { recursive: true });
  await symlink(join(REPO_ROOT, "dist", "plugin-api-types"), join(nm, "@svc", "plugin-api"), "junction");
  await symlink(join(REPO_ROOT, "node_modules", "@types", "node"), join(nm, "@types", "node"), "junction");
  execFileSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { stdio: "pipe" });
  return names.sort();
}
