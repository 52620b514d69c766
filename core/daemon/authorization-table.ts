/**
 * docs/authorization.md's operation × caller table, made by asking {@link authorize} itself what
 * each kind of caller gets: the documented rule is the enforced one (test/docs keeps the page equal
 * to this; `npm run docs` rewrites it).
 */
import { SvcError } from "../errors.js";
import { OPERATIONS, authorize, type OperationId, type OperationRule } from "./authorization.js";
import { remotePrincipal } from "./principal.js";

/** The callers beyond loopback without a token, one column each, as their principals. */
export const REMOTE_COLUMNS: ReadonlyArray<{ title: string; principal: string }> = [
  { title: "Network, no token", principal: "anonymous" },
  { title: "Plain tunnel", principal: remotePrincipal({ kind: "tunnel" }) },
  { title: "Sealed tunnel, no token", principal: remotePrincipal({ kind: "sealed" }) },
  { title: "Pairing, read", principal: remotePrincipal({ kind: "pairing", pairingId: "p", scope: "read" }) },
  { title: "Pairing, operate", principal: remotePrincipal({ kind: "pairing", pairingId: "p", scope: "operate" }) },
];

/** What `principal` gets for `id`: ✓, or the status of the refusal. */
export function verdict(id: OperationId, principal: string): string {
  try {
    authorize(id, principal);
    return "✓";
  } catch (err) {
    if (err instanceof SvcError) return err.code === "unauthorized" ? "401" : "403";
    throw err;
  }
}

const code = (xs: readonly string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(", ") : "–");

export function authorizationTable(): string {
  const head = ["Operation", "What", "Requires", ...REMOTE_COLUMNS.map((c) => c.title), "REST", "MCP", "CLI"];
  const rows = (Object.entries(OPERATIONS) as [OperationId, OperationRule][]).map(([id, op]) =>
    [
      `\`${id}\``,
      // A "|" inside a cell ends it in Markdown: escaped.
      op.summary.replaceAll("|", "\\|"),
      op.requires === "token" ? "**token**" : "local",
      ...REMOTE_COLUMNS.map((c) => verdict(id, c.principal)),
      code(op.rest),
      code(op.mcp),
      code(op.cli.map((c) => `svc ${c}`)),
    ].join(" | "),
  );
  return (
    [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r} |`)].join("\n") +
    "\n"
  );
}
