/**
 * The JSON Schema of config.json (draft 2020-12), generated from the zod schema with the built-in
 * defaults attached as `default` annotations, for editors to complete and check a hand-edited file.
 * Written to manifests/config.schema.json and printed by `svc config schema`.
 */
import { z } from "zod";
import { DEFAULTS, configSchema } from "./schema.js";

export type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  default?: unknown;
  [k: string]: unknown;
};

export const CONFIG_SCHEMA_ID = "https://svc.invalid/schemas/config.schema.json";

export function configJsonSchema(): JsonSchema {
  const schema = z.toJSONSchema(configSchema, { io: "input" }) as JsonSchema;
  attachDefaults(schema, DEFAULTS);
  return { $schema: schema.$schema, $id: CONFIG_SCHEMA_ID, title: "svc config.json", ...schema };
}

/** The schema as written to manifests/config.schema.json. */
export function configJsonSchemaText(): string {
  return JSON.stringify(configJsonSchema(), null, 2) + "\n";
}

function attachDefaults(node: JsonSchema, defaults: Record<string, unknown>): void {
  for (const [k, d] of Object.entries(defaults)) {
    const prop = node.properties?.[k];
    if (!prop) continue;
    const isSection = typeof d === "object" && d !== null && !Array.isArray(d) && prop.properties !== undefined;
    if (isSection) attachDefaults(prop, d as Record<string, unknown>);
    else prop.default = d;
  }
}
