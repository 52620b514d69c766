/**
 * Issue 27, "MCP polish": every property of every tool's input and output schema, at any depth,
 * says what it is, and no schema is an "anything" (`{}`) where svc knows the shape. Read from
 * tools/list of a real daemon with every tool-bearing feature on.
 */
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { useDaemonProcess } from "../../support/cli.js";

type JsonSchema = Record<string, unknown>;

/**
 * Where any JSON is the contract, not a shape svc leaves unsaid: a config value (its type is the
 * key's: a number, a string, a section...), and a provider's settings and summary (each provider
 * plugin defines its own).
 */
const OPEN_BY_DESIGN = new Set<string>([
  "config_get.output.value",
  "config_set.input.value",
  "config_set.output.value",
  "setup_sentinel_provider.input.settings.*",
  "setup_sentinel_provider.output.configured.*",
]);

/** Where `schema` says nothing about its value (`{}`, or only words). */
function isAnything(schema: JsonSchema): boolean {
  const saying = ["type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref", "not", "properties", "items"];
  return !saying.some((k) => k in schema);
}

/** `[path, problem]` for each property without a description and each "anything" schema under `schema`. */
function audit(schema: unknown, path: string, out: string[]): void {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return;
  const s = schema as JsonSchema;
  if (isAnything(s) && !OPEN_BY_DESIGN.has(path)) out.push(`${path}: an "anything" schema`);
  for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, JsonSchema>)) {
    if (typeof p?.description !== "string" || p.description.trim() === "") out.push(`${path}.${k}: no description`);
    audit(p, `${path}.${k}`, out);
  }
  if (s.items !== undefined) audit(s.items, `${path}[]`, out);
  // `additionalProperties: {}` beside named properties is a loose object (a result may carry more
  // fields than it names), not an unsaid shape; on a map it is the shape of every value.
  const open =
    typeof s.additionalProperties === "object" &&
    s.additionalProperties !== null &&
    Object.keys(s.additionalProperties).length === 0 &&
    "properties" in s;
  if (typeof s.additionalProperties === "object" && !open) audit(s.additionalProperties, `${path}.*`, out);
  for (const key of ["anyOf", "oneOf", "allOf"] as const) {
    for (const [i, branch] of ((s[key] ?? []) as unknown[]).entries()) audit(branch, `${path}|${key}${i}`, out);
  }
}

describe("tool schemas, as tools/list shows them", () => {
  const fx = useDaemonProcess({
    prefix: "svc-mcp-schemas-",
    config: { features: { llmEndpoint: true }, llmEndpoint: { port: 0 } },
  });

  it("describe every input and output property at every depth, and leave no known shape as {}", async () => {
    const client = new Client({ name: "svc-schema-test", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const t of tools) {
      audit(t.inputSchema, `${t.name}.input`, problems);
      audit(t.outputSchema, `${t.name}.output`, problems);
    }
    expect(problems).toEqual([]);
  });
});
