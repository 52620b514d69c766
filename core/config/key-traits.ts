import type { z } from "zod";
import { schemaAt, splitKey } from "./dotted-path.js";
import { configSchema } from "./schema.js";
import { isSecretPath } from "./secrets.js";

/** What a dotted config key implies for a value set through it: its field schema, and whether it is a secret (secrets.ts). */
export function keyTraits(key: string): { schema: z.ZodType; secret: boolean } {
  const path = splitKey(key);
  return { schema: schemaAt(configSchema, path), secret: isSecretPath(path) };
}
