/** Writes manifests/swarm-v1.schema.json (`npm run docs`); test/core/swarm/plan.test.ts keeps it in sync. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { svcRoot } from "../plugin-host/locations.js";
import { swarmJsonSchema } from "./schema.js";

export const SWARM_SCHEMA_FILE = "manifests/swarm-v1.schema.json";

export function swarmJsonSchemaText(): string {
  return JSON.stringify(swarmJsonSchema(), null, 2) + "\n";
}

if (process.argv[1]?.endsWith("write-schema.js")) {
  const path = join(svcRoot(), SWARM_SCHEMA_FILE);
  writeFileSync(path, swarmJsonSchemaText());
  process.stdout.write(`wrote ${path}\n`);
}
