/**
 * docs/authorization.md's table is generated from core/daemon/authorization.ts (`npm run docs`
 * rewrites it), so the documented rule is the enforced one.
 */
import { it } from "vitest";
import { OPERATIONS } from "../../core/daemon/authorization.js";
import { expectDocSection } from "../support/readme.js";

const code = (xs: readonly string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(", ") : "–");

it("docs/authorization.md's table is core/daemon/authorization.ts's OPERATIONS", async () => {
  const rows = Object.entries(OPERATIONS).map(
    // A "|" inside a cell ends it in Markdown: escaped.
    ([id, op]) => `| \`${id}\` | ${op.summary.replaceAll("|", "\\|")} | ${op.requires === "token" ? "**token**" : "local"} | ${code(op.rest)} | ${code(op.mcp)} | ${code(op.cli.map((c) => `svc ${c}`))} |\n`,
  );
  await expectDocSection("docs/authorization.md", "authorization-table", `| Operation | What | Requires | REST | MCP | CLI |\n|---|---|---|---|---|---|\n${rows.join("")}`);
});
