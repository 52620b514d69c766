/**
 * The manifest contracts third-party packages depend on: `svc/adapter/v1` (package.json key
 * `svc-adapter`, or a standalone `svc-adapter.json` beside it, which wins) and
 * `svc/corpus-preset/v1` (package.json key `svc-corpus-preset`). The JSON Schemas in
 * manifests/ are generated from these (`npm run build`, kept honest by a test).
 */
import { z } from "zod";

export const ADAPTER_SCHEMA_ID = "svc/adapter/v1";
export const ADAPTER_MANIFEST_KEY = "svc-adapter";
export const ADAPTER_MANIFEST_FILE = "svc-adapter.json";
export const CORPUS_PRESET_SCHEMA_ID = "svc/corpus-preset/v1";
export const CORPUS_PRESET_KEY = "svc-corpus-preset";

export const kindSlug = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, "must be a slug: lower-case letters, digits and '-', starting with a letter or digit")
  .max(64);

const relativePath = z
  .string()
  .regex(/^\.\//, "must be a path relative to the package root, starting with ./")
  .refine((p) => !p.split("/").includes(".."), "must stay inside the package (no '..')");

export const pluginDeclSchema = z.object({
  type: z
    .enum(["adapter", "provider", "target", "redactor"])
    .describe(
      "What the plugin is: adapter (starts agent sessions), provider (produces events), target (consumes matched events), redactor (redacts text leaving the daemon: trace attributes, judge requests)",
    ),
  kind: kindSlug.describe(
    "The kind it implements, e.g. `jira`; a later plugin of the same type and kind replaces an earlier one",
  ),
  entry: relativePath.describe(
    "Module (relative to the package root) whose default export is made by defineAdapter/defineProvider/defineTarget/defineRedactor",
  ),
  description: z.string().max(200).optional().describe("One line shown by `svc adapters ls`"),
});

export const adapterManifestSchema = z
  .object({
    $schema: z.string().optional(),
    schema: z.literal(ADAPTER_SCHEMA_ID).describe("Manifest schema version"),
    svc: z.string().min(1).describe('semver range of svc versions this package works with, e.g. "^0.20"'),
    plugins: z.array(pluginDeclSchema).min(1).describe("The plugins this package provides"),
  })
  .describe("svc adapter manifest (package.json key `svc-adapter`, or svc-adapter.json beside package.json)");

const presetPath = z
  .string()
  .min(1)
  .refine(
    (p) => !p.startsWith("/") && !p.split(/[\\/]/).includes(".."),
    "must be a relative path inside the target directory",
  );

export const corpusPresetSchema = z
  .object({
    slug: kindSlug.describe("Name used by `svc-corpus init <slug>`"),
    description: z.string().min(1).max(200).describe("One line shown by `svc-corpus init --list`"),
    directory: relativePath.optional().describe("A folder of the package copied into the target directory"),
    files: z
      .record(presetPath, z.string())
      .optional()
      .describe("Files written into the target directory: relative path to text content"),
  })
  .refine((p) => (p.directory === undefined) !== (p.files === undefined), "give exactly one of `directory` or `files`");

export const corpusPresetManifestSchema = z
  .object({
    $schema: z.string().optional(),
    schema: z.literal(CORPUS_PRESET_SCHEMA_ID).describe("Manifest schema version"),
    presets: z.array(corpusPresetSchema).min(1).describe("The presets this package offers"),
  })
  .describe("svc corpus preset manifest (package.json key `svc-corpus-preset`)");

export type PluginDecl = z.infer<typeof pluginDeclSchema>;
export type AdapterManifest = z.infer<typeof adapterManifestSchema>;
export type CorpusPreset = z.infer<typeof corpusPresetSchema>;
export type CorpusPresetManifest = z.infer<typeof corpusPresetManifestSchema>;

/** The JSON Schemas written to manifests/ (input side: what an author writes). */
export function manifestJsonSchemas(): Record<string, unknown> {
  const gen = (schema: z.ZodType, title: string) => ({ title, ...z.toJSONSchema(schema, { io: "input" }) });
  return {
    "adapter-v1.schema.json": gen(adapterManifestSchema, ADAPTER_SCHEMA_ID),
    "corpus-preset-v1.schema.json": gen(corpusPresetManifestSchema, CORPUS_PRESET_SCHEMA_ID),
  };
}
