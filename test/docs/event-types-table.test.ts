/**
 * docs/event-types.md's GitHub table is generated from the vocabulary (plugins/github-common
 * event-types.ts; `npm run docs` rewrites it): every family, its arguments, its payload mapping
 * and which providers serve it.
 */
import { it } from "vitest";
import { GITHUB_FAMILIES, githubEventTypes } from "../../plugins/github-common/index.js";
import { LOCAL_GH_TYPES } from "../../plugins/local-gh/index.js";
import { expectDocSection } from "../support/readme.js";

it("docs/event-types.md lists every GitHub family with its arguments, payload and providers", async () => {
  const local = LOCAL_GH_TYPES();
  const rows = githubEventTypes().map((t) => {
    const f = GITHUB_FAMILIES.find((x) => `github.${x.event}` === t.name)!;
    const args = Object.keys(t.inputSchema.properties as object)
      .map((a) => `\`${a}\``)
      .join(", ");
    const lg = local.find((x) => x.name === t.name);
    const only = (
      lg?.inputSchema.properties as Record<string, { description?: string }> | undefined
    )?.actions?.description?.match(/Known: (\w+)$/)?.[1];
    return `| \`${t.name}\` | ${args} | ${f.payload ? "specific" : "generic"} | ${lg ? `local-gh${only && f.actions && only !== f.actions.join(", ") ? ` (${only})` : ""}, ` : ""}webhook |\n`;
  });
  await expectDocSection(
    "docs/event-types.md",
    "github-event-types",
    `| Name | Arguments | Payload | Providers |\n|---|---|---|---|\n${rows.join("")}`,
  );
});
