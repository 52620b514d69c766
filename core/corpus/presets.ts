/**
 * Corpus presets (`svc/corpus-preset/v1`): packages listed in config `corpusPresetPackages`
 * declare presets under the package.json key `svc-corpus-preset`; they are resolved like adapters
 * (install location, then cwd) and merged in order, a later package's slug replacing an earlier one.
 */
import { issuesToDetails } from "../errors.js";
import { resolutionBases, type ResolutionBase } from "../plugin-host/locations.js";
import { CORPUS_PRESET_KEY, corpusPresetManifestSchema, type CorpusPreset } from "../plugin-host/manifest-schema.js";
import { resolvePackage } from "../plugin-host/resolve-package.js";

export interface PresetSource {
  package: string;
  dir: string;
  resolvedFrom: ResolutionBase["from"];
  version?: string;
}

export interface AvailablePreset {
  preset: CorpusPreset;
  source: PresetSource;
  /** Packages whose preset of the same slug this one replaces. */
  replaces: string[];
}

export interface PresetScan {
  presets: AvailablePreset[];
  failures: Array<{ package: string; error: string }>;
}

export function scanPresets(ids: readonly string[], bases: ResolutionBase[] = resolutionBases()): PresetScan {
  const bySlug = new Map<string, AvailablePreset>();
  const failures: PresetScan["failures"] = [];
  for (const id of [...new Set(ids)]) {
    try {
      const resolved = resolvePackage(id, bases);
      const raw = resolved.packageJson[CORPUS_PRESET_KEY];
      if (raw === undefined) throw new Error(`${resolved.dir}/package.json has no "${CORPUS_PRESET_KEY}" key`);
      const parsed = corpusPresetManifestSchema.safeParse(raw);
      if (!parsed.success) {
        const problems = issuesToDetails(parsed.error.issues).map((d) => `${d.path}: ${d.message}`);
        throw new Error(
          `invalid svc/corpus-preset/v1 manifest in ${resolved.dir}/package.json: ${problems.join("; ")}`,
        );
      }
      const { version } = resolved.packageJson;
      const source: PresetSource = {
        package: id,
        dir: resolved.dir,
        resolvedFrom: resolved.resolvedFrom,
        ...(typeof version === "string" ? { version } : {}),
      };
      for (const preset of parsed.data.presets) {
        const prior = bySlug.get(preset.slug);
        bySlug.set(preset.slug, { preset, source, replaces: prior ? [...prior.replaces, prior.source.package] : [] });
      }
    } catch (err) {
      failures.push({ package: id, error: (err as Error).message });
    }
  }
  return { presets: [...bySlug.values()].sort((a, b) => a.preset.slug.localeCompare(b.preset.slug)), failures };
}
