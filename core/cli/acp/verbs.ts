import { loadConfigFile } from "../../config/load.js";
import { setConfigKey, unsetConfigKey } from "../../config/write.js";
import { SvcError } from "../../errors.js";
import { KindTable } from "../../plugin-host/registry.js";
import { declaredPlugins, scanPackages } from "../../plugin-host/scan.js";
import type { AcpRecipe } from "../../config/acp-catalog.js";
import { configFilePath } from "../../config/config-path.js";
import { dim, printJson, printTable, println, warn } from "../output.js";
import { acpEnvInput } from "./env-input.js";
import { acpListing } from "./listing.js";

const SLUG = /^[a-z0-9][a-z0-9_-]*$/;

export interface AcpAddInput {
  bin: string;
  arg?: string[];
  env?: string[];
  envFromFile?: string[];
  name?: string;
  description?: string;
  resumable?: boolean;
  installHint?: string;
}

/** `svc acp add`: writes `acpAgents.<slug>` into the raw config tree under its lock (unknown keys kept). */
export async function acpAdd(slug: string, input: AcpAddInput): Promise<void> {
  if (!SLUG.test(slug))
    throw new SvcError("usage", `slug must be lower-case letters, digits, "_" or "-", got ${JSON.stringify(slug)}`);
  const env = await acpEnvInput(slug, input);
  const entry: AcpRecipe = {
    bin: input.bin,
    ...(input.arg?.length ? { bin_args: input.arg } : {}),
    ...(input.name ? { name: input.name } : {}),
    ...(input.description ? { description: input.description } : {}),
    ...(Object.keys(env).length ? { env } : {}),
    ...(input.resumable ? { resumable: true } : {}),
    ...(input.installHint ? { install_hint: input.installHint } : {}),
  };
  const path = configFilePath();
  const { warnings } = await setConfigKey(path, `acpAgents.${slug}`, entry);
  for (const w of warnings) warn(w);
  println(`added acpAgents.${slug} (${input.bin}) to ${path}`);
}

/** `svc acp rm`. */
export async function acpRm(slug: string): Promise<void> {
  if (!SLUG.test(slug))
    throw new SvcError("usage", `slug must be lower-case letters, digits, "_" or "-", got ${JSON.stringify(slug)}`);
  const path = configFilePath();
  const { changed } = await unsetConfigKey(path, `acpAgents.${slug}`);
  if (!changed)
    throw new SvcError(
      "not_found",
      `no acpAgents.${slug} in ${path} (catalog entries cannot be removed, only shadowed)`,
    );
  println(`removed acpAgents.${slug} from ${path}`);
}

/** `svc acp ls`. */
export async function acpLs(json: boolean): Promise<void> {
  const file = await loadConfigFile(configFilePath());
  for (const w of file.warnings) warn(w);
  const scan = scanPackages({ ids: file.config.adapters ?? [], env: process.env, cwd: process.cwd(), builtins: false });
  // Only the package that wins each adapter kind (the last one in `adapters`), as the daemon loads it.
  const packages = new KindTable(declaredPlugins(scan.packages))
    .list()
    .filter((d) => d.type === "adapter")
    .map((d) => ({ kind: d.kind, package: d.source.package, description: d.description }));
  const rows = acpListing((file.config.acpAgents ?? {}) as Record<string, AcpRecipe>, packages);
  if (json) return printJson({ agents: rows });
  printTable(
    ["SLUG", "SOURCE", "NAME", "COMMAND", "STATUS"],
    rows.map((r) => [
      r.slug,
      r.source + (r.shadows.length ? ` (shadows ${r.shadows.join(", ")})` : ""),
      r.name,
      r.package ?? [r.bin, ...(r.args ?? [])].join(" "),
      r.package ? "package" : r.onPath ? "on PATH" : `missing: ${r.install_hint ?? "not on PATH"}`,
    ]),
  );
  println(dim("resolution order: @svc/adapter-<slug> package, then config acpAgents, then the built-in catalog"));
}
