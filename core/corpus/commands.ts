/** `svc-corpus init --list` and `svc-corpus init <slug>`. */
import { readEffectiveConfig } from "../config/read-effective.js";
import { SvcError } from "../errors.js";
import { bold, dim, printJson, printTable, println, warn } from "../cli/output.js";
import { materialise } from "./materialise.js";
import { scanPresets, type PresetScan } from "./presets.js";

async function scan(): Promise<PresetScan & { packages: string[] }> {
  const config = await readEffectiveConfig();
  for (const w of config.warnings) warn(w);
  const packages = [...config.effective.corpusPresetPackages];
  const result = scanPresets(packages);
  for (const f of result.failures) warn(`corpus preset package ${f.package} skipped: ${f.error}`);
  return { ...result, packages };
}

export async function corpusList(json: boolean): Promise<void> {
  const { presets, failures, packages } = await scan();
  if (json) {
    return printJson({
      packages,
      presets: presets.map((p) => ({
        slug: p.preset.slug,
        description: p.preset.description,
        package: p.source.package,
        version: p.source.version,
        resolvedFrom: p.source.resolvedFrom,
        replaces: p.replaces,
      })),
      failures,
    });
  }
  if (presets.length === 0) {
    println(dim(`no presets found in ${packages.join(", ")}`));
    return;
  }
  printTable(
    ["SLUG", "PACKAGE", "DESCRIPTION"],
    presets.map((p) => [
      p.preset.slug,
      `${p.source.package}${p.replaces.length ? ` (replaces ${p.replaces.join(", ")})` : ""}`,
      p.preset.description,
    ]),
  );
}

export async function corpusInit(slug: string, opts: { dir: string; force: boolean; json: boolean }): Promise<void> {
  const { presets, packages } = await scan();
  const found = presets.find((p) => p.preset.slug === slug);
  if (!found) {
    throw new SvcError(
      "not_found",
      `no corpus preset "${slug}" in ${packages.join(", ")}; available: ${presets.map((p) => p.preset.slug).join(", ") || "(none)"}`,
    );
  }
  const result = await materialise(found, opts.dir, opts.force);
  if (opts.json) return printJson({ slug, package: found.source.package, ...result });
  println(`${bold(slug)} from ${found.source.package}: wrote ${result.written.length} file(s) into ${result.dir}`);
  for (const f of result.written) println(`  ${f}`);
}
