/** The Markdown files a reader sees: the README front door and every page under docs/. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../support/paths.js";

export function docFiles(): string[] {
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

export interface Fence {
  info: string;
  body: string;
  line: number;
}

/** Every fenced code block of `text`, with its info string (`sh`, `sh setup`, `json file=…`). */
export function fencesOf(text: string): Fence[] {
  const out: Fence[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    out.push({ info: open[1]!.trim(), body: body.join("\n"), line: start + 1 });
  }
  return out;
}
