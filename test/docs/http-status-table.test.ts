import { it } from "vitest";
import { HTTP_STATUS } from "../../core/errors.js";
import { expectReadmeSection } from "../support/readme.js";

it("the README's error table is the one in core/errors.ts", async () => {
  const rows = Object.entries(HTTP_STATUS)
    .sort(([a, x], [b, y]) => x - y || a.localeCompare(b))
    .map(([code, status]) => `| \`${code}\` | ${status} |\n`);
  await expectReadmeSection("http-status-table", `| Code | HTTP status |\n|---|---|\n${rows.join("")}`);
});
