import { it } from "vitest";
import { HTTP_STATUS } from "../../core/errors.js";
import { expectDocSection } from "../support/readme.js";

it("docs/operations.md's error table is the one in core/errors.ts", async () => {
  const rows = Object.entries(HTTP_STATUS)
    .sort(([a, x], [b, y]) => x - y || a.localeCompare(b))
    .map(([code, status]) => `| \`${code}\` | ${status} |\n`);
  await expectDocSection(
    "docs/operations.md",
    "http-status-table",
    `| Code | HTTP status |\n|---|---|\n${rows.join("")}`,
  );
});
