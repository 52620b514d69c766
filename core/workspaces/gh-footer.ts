/**
 * The provenance footer the gh shim appends to a pull request's body (where the body is in a
 * command line: gh-args.ts). The footer is deterministic (the same session always stamps the same
 * text) and marked, so a body that already carries it is not stamped twice. Nothing but
 * pull-request bodies is touched (commit messages never are: they do not go through gh).
 */
export interface Provenance {
  sessionId: string;
  adapter: string;
  model?: string;
  workspace: string;
}

export const FOOTER_MARK = "<!-- svc-provenance -->";

/** `edit` for a body set by `gh pr edit`: it says "Edited by" instead of "Created by". */
export function provenanceFooter(p: Provenance, action: "create" | "edit" = "create"): string {
  return `\n\n---\n${FOOTER_MARK}\n${action === "edit" ? "Edited" : "Created"} by an svc agent session: session \`${p.sessionId}\` · adapter \`${p.adapter}\` · model \`${p.model ?? "unknown"}\` · workspace \`${p.workspace}\`\n`;
}

export function appendFooter(body: string, footer: string): string {
  return body.includes(FOOTER_MARK) ? body : body.replace(/\s+$/, "") + footer;
}
