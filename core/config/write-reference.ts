/**
 * `npm run docs`: regenerates docs/configuration.md's reference and
 * manifests/config.schema.json. With `--check`, writes nothing and exits 1 when either is stale.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { configJsonSchemaText } from "./json-schema.js";
import { renderReference, spliceReference } from "./reference.js";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const README = ROOT + "docs/configuration.md";
const SCHEMA = ROOT + "manifests/config.schema.json";

const check = process.argv.includes("--check");
const readme = await readFile(README, "utf8");
const nextReadme = spliceReference(readme, renderReference());
const schemaNow = await readFile(SCHEMA, "utf8").catch(() => "");
const nextSchema = configJsonSchemaText();
const stale = [
  readme !== nextReadme ? "docs/configuration.md" : "",
  schemaNow !== nextSchema ? "manifests/config.schema.json" : "",
].filter(Boolean);
if (check) {
  if (stale.length) {
    process.stderr.write(`out of date: ${stale.join(", ")}; run \`npm run docs\`\n`);
    process.exitCode = 1;
  }
} else {
  if (readme !== nextReadme) await writeFile(README, nextReadme);
  if (schemaNow !== nextSchema) await writeFile(SCHEMA, nextSchema);
  process.stdout.write(stale.length ? `updated ${stale.join(", ")}\n` : "configuration reference is up to date\n");
}
