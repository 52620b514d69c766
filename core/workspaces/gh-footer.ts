/**
 * The provenance footer and where it goes in a `gh pr create` (alias `gh pr new`) command line.
 * The footer is deterministic (the same session always stamps the same text) and marked, so a
 * body that already carries it is not stamped twice. Nothing but pull-request creation is touched
 * (commit messages never are: they do not go through gh).
 */
export interface Provenance {
  sessionId: string;
  adapter: string;
  model?: string;
  workspace: string;
}

export const FOOTER_MARK = "<!-- svc-provenance -->";

export function provenanceFooter(p: Provenance): string {
  return `\n\n---\n${FOOTER_MARK}\nCreated by an svc agent session: session \`${p.sessionId}\` · adapter \`${p.adapter}\` · model \`${p.model ?? "unknown"}\` · workspace \`${p.workspace}\`\n`;
}

export function appendFooter(body: string, footer: string): string {
  return body.includes(FOOTER_MARK) ? body : body.replace(/\s+$/, "") + footer;
}

/** How the body of a `gh pr create` is given. */
export type BodySource =
  | { kind: "none" }
  | { kind: "arg"; index: number; inline: boolean }
  | { kind: "file"; index: number; inline: boolean; path: string }
  | { kind: "stdin"; index: number; inline: boolean }
  | { kind: "editor" };

const FILL = new Set(["--fill", "-f", "--fill-first", "--fill-verbose", "--web", "-w"]);

/** Finds the body of a `gh pr create` command line; `none` for any other command (or one gh fills itself: --fill, --web). */
export function bodySource(args: readonly string[]): BodySource {
  if (args[0] !== "pr" || (args[1] !== "create" && args[1] !== "new")) return { kind: "none" };
  let found: BodySource | undefined;
  for (let i = 2; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") break;
    if (a === "--body" || a === "-b") {
      found = { kind: "arg", index: i + 1, inline: false };
      i++;
    } else if (a.startsWith("--body=")) {
      found = { kind: "arg", index: i, inline: true };
    } else if (a === "--body-file" || a === "-F") {
      const path = args[i + 1] ?? "";
      found = path === "-" ? { kind: "stdin", index: i + 1, inline: false } : { kind: "file", index: i + 1, inline: false, path };
      i++;
    } else if (a.startsWith("--body-file=")) {
      const path = a.slice("--body-file=".length);
      found = path === "-" ? { kind: "stdin", index: i, inline: true } : { kind: "file", index: i, inline: true, path };
    } else if (FILL.has(a)) {
      if (!found) return { kind: "none" };
    }
  }
  return found ?? { kind: "editor" };
}

/** `args` with the value at `src.index` replaced (keeping an inline `--flag=` prefix). */
export function replaceValue(args: readonly string[], src: { index: number; inline: boolean }, value: string): string[] {
  const out = [...args];
  const cur = out[src.index] ?? "";
  out[src.index] = src.inline ? cur.slice(0, cur.indexOf("=") + 1) + value : value;
  return out;
}

/** The value at `src.index` (without an inline prefix). */
export function valueAt(args: readonly string[], src: { index: number; inline: boolean }): string {
  const cur = args[src.index] ?? "";
  return src.inline ? cur.slice(cur.indexOf("=") + 1) : cur;
}
