/**
 * docs/authorization.md's table is generated from core/daemon/authorization.ts (`npm run docs`
 * rewrites it): its remote columns are what `authorize` answers each kind of caller, so the
 * documented rule is the enforced one.
 */
import { it } from "vitest";
import { authorizationTable } from "../../core/daemon/authorization-table.js";
import { expectDocSection } from "../support/readme.js";

it("docs/authorization.md's table is core/daemon/authorization.ts's OPERATIONS, remote columns included", async () => {
  await expectDocSection("docs/authorization.md", "authorization-table", authorizationTable());
});
