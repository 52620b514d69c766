/**
 * Writes the generated manifest JSON Schemas into manifests/:
 * `npm run docs`. A test keeps them in sync.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { svcRoot } from "./locations.js";
import { manifestJsonSchemas } from "./manifest-schema.js";

for (const [name, schema] of Object.entries(manifestJsonSchemas())) {
  const path = join(svcRoot(), "manifests", name);
  writeFileSync(path, JSON.stringify(schema, null, 2) + "\n");
  process.stdout.write(`wrote ${path}\n`);
}
