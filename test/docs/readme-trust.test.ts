/**
 * The README's trust section (issue 12): its authorization table (operation × surface) is
 * core/daemon/authorization.ts's OPERATIONS and its limits table is core/plugin-api/limits.ts's
 * constants, so neither can drift from what the daemon enforces (`npm run docs` rewrites both).
 */
import { it } from "vitest";
import { OPERATIONS } from "../../core/daemon/authorization.js";
import * as L from "../../core/plugin-api/limits.js";
import { expectDocSection } from "../support/readme.js";

const n = (x: number) => x.toLocaleString("en-US");

it("the README's authorization table is OPERATIONS, one requirement per operation on every surface", async () => {
  const cell = (surfaces: readonly string[], requires: string) =>
    surfaces.length === 0 ? "–" : requires === "token" ? "**token**" : "local";
  // An operation with CLI verbs but no route is one the CLI performs itself, as the user.
  const cli = (op: (typeof OPERATIONS)[keyof typeof OPERATIONS]) =>
    op.cli.length > 0 && op.rest.length === 0 ? "as the user" : cell(op.cli, op.requires);
  const rows = Object.entries(OPERATIONS).map(
    ([id, op]) =>
      `| \`${id}\`: ${op.summary.split(" (")[0]!.split(":")[0]} | ${cell(op.rest, op.requires)} | ${cell(op.mcp, op.requires)} | ${cli(op)} |\n`,
  );
  await expectDocSection(
    "README.md",
    "authorization-surfaces",
    `| Operation | REST | MCP | CLI |\n|---|---|---|---|\n${rows.join("")}`,
  );
});

it("the README's limits table is core/plugin-api/limits.ts", async () => {
  const rows = [
    ["Nesting of objects and arrays in a JSON body", `${L.JSON_DEPTH_MAX} levels`],
    ["Event id", L.EVENT_ID_RULE.replace(/"\."/, "`.`")],
    ["Event type", `1 to ${n(L.EVENT_TYPE_MAX)} characters`],
    ["Subjects per event", `1 to ${n(L.SUBJECTS_PER_EVENT_MAX)}`],
    ["Subject length (events and match clauses)", `1 to ${n(L.SUBJECT_LENGTH_MAX)} characters`],
    ["Match clauses per sentinel", `1 to ${n(L.CLAUSES_PER_SENTINEL_MAX)}`],
    ["Type globs per clause", `1 to ${n(L.TYPES_PER_CLAUSE_MAX)}`],
    ["Fields of a webhook target", "exactly `kind`, `url`, `secret`, optionally `mcp`"],
  ].map(([what, limit]) => `| ${what} | ${limit} |\n`);
  await expectDocSection("README.md", "limits-summary", `| What | Limit |\n|---|---|\n${rows.join("")}`);
});
