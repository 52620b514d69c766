/**
 * The first phases of loading, run for built-ins and third-party packages alike:
 * resolve → read manifest → validate → host range. No plugin code runs here, so `svc adapters ls`
 * stays cheap.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { SVC_VERSION } from "../version.js";
import { checkHostRange, PhaseError, readRawManifest, validateManifest } from "./manifest.js";
import type { AdapterManifest, PluginDecl } from "./manifest-schema.js";
import { resolutionBases, svcRoot, type ResolutionBase } from "./locations.js";
import { resolvePackage } from "./resolve-package.js";
import type { LoadFailure, PluginSource, PluginType } from "./registry.js";

/** The package id under which built-in plugins are reported. */
export const BUILTIN_PACKAGE = "svc";
/**
 * Built-in manifests: one per built-in plugin (each shaped like a package of its own, so one that
 * fails to load costs only itself), relative to the svc package root; entries are relative to the
 * root too.
 */
export const BUILTIN_MANIFEST_DIR = "manifests/builtin";

/** The failure/package label of a built-in: `svc (built-in <name>)`. */
export function builtinLabel(file: string): string {
  return `${BUILTIN_PACKAGE} (built-in ${basename(file, ".json")})`;
}

function builtinManifestFiles(): string[] {
  return readdirSync(join(svcRoot(), BUILTIN_MANIFEST_DIR))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => join(BUILTIN_MANIFEST_DIR, f));
}

export interface ScannedPackage {
  /** The package id, or `svc (built-in <name>)` for a built-in. */
  label: string;
  source: PluginSource;
  manifest: AdapterManifest;
}

export interface ScanResult {
  packages: ScannedPackage[];
  failures: LoadFailure[];
}

interface Located {
  source: PluginSource;
  raw: unknown;
  where: string;
}

export interface ScanOptions {
  /** Package ids from config `adapters`, in order. */
  ids: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where to resolve from (default: install location, then cwd). */
  bases?: ResolutionBase[];
  /** Skip the built-in manifests (tests of third-party loading alone). */
  builtins?: boolean;
}

/** Scans the built-ins, then each id in order; every failure is collected, never thrown. */
export function scanPackages(options: ScanOptions): ScanResult {
  const bases = options.bases ?? resolutionBases(options.env, options.cwd);
  const out: ScanResult = { packages: [], failures: [] };
  const step = (pkg: string, locate: () => Located) => {
    const r = scanOne(pkg, locate, SVC_VERSION);
    if ("phase" in r) out.failures.push(r);
    else out.packages.push(r);
  };
  if (options.builtins !== false) {
    for (const file of builtinManifestFiles()) step(builtinLabel(file), () => locateBuiltin(file));
  }
  for (const id of [...new Set(options.ids)]) step(id, () => locateThirdParty(id, bases));
  return out;
}

function scanOne(pkg: string, locate: () => Located, version: string): ScannedPackage | LoadFailure {
  try {
    const { source, raw, where } = locate();
    const manifest = validateManifest(raw, where);
    checkHostRange(manifest, version);
    return { label: pkg, source, manifest };
  } catch (err) {
    const phase = err instanceof PhaseError ? err.phase : "resolve";
    return { package: pkg, phase, error: (err as Error).message };
  }
}

function locateBuiltin(file: string): Located {
  const root = svcRoot();
  const path = join(root, file);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new PhaseError("manifest", `cannot read built-in manifest ${path}: ${(err as Error).message}`);
  }
  return {
    source: {
      package: BUILTIN_PACKAGE,
      builtin: true,
      name: basename(file, ".json"),
      resolvedFrom: "builtin",
      dir: root,
      version: SVC_VERSION,
    },
    raw,
    where: path,
  };
}

function locateThirdParty(id: string, bases: ResolutionBase[]): Located {
  let resolved;
  try {
    resolved = resolvePackage(id, bases);
  } catch (err) {
    throw new PhaseError("resolve", (err as Error).message);
  }
  const found = readRawManifest(resolved.dir, resolved.packageJson);
  if (!found) {
    throw new PhaseError(
      "manifest",
      `${resolved.dir} has no adapter manifest: add a "svc-adapter" key to its package.json or an svc-adapter.json beside it`,
    );
  }
  const { version } = resolved.packageJson;
  return {
    source: {
      package: id,
      builtin: false,
      resolvedFrom: resolved.resolvedFrom,
      dir: resolved.dir,
      ...(typeof version === "string" ? { version } : {}),
    },
    raw: found.raw,
    where: found.file,
  };
}

export interface DeclaredPlugin {
  type: PluginType;
  kind: string;
  description?: string;
  entry: string;
  source: PluginSource;
}

/**
 * Every declared plugin in load order. A `KindTable` of them (registry.ts) says who wins each
 * (type, kind) by declaration alone, by the rule the registry applies once they are loaded.
 */
export function declaredPlugins(packages: readonly ScannedPackage[]): DeclaredPlugin[] {
  return packages.flatMap((p) => p.manifest.plugins.map((d: PluginDecl) => ({ ...d, source: p.source })));
}
