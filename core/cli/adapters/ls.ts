/**
 * `svc adapters ls`: each package, where it resolved, its version, what it provides, which kinds it
 * wins and which it lost (to whom), plus the built-ins and every failure. By default only manifests
 * are read (no plugin code runs); `--load` also imports each entry and checks its shape, and exits 1
 * when any package failed.
 */
import { SvcError } from "../../errors.js";
import { readJsonFile } from "../../storage/json-file.js";
import { installDir } from "../../plugin-host/locations.js";
import { PhaseError } from "../../plugin-host/manifest.js";
import { importPackage, inListedOrder } from "../../plugin-host/load.js";
import { KindTable, type LoadFailure, type PluginSource } from "../../plugin-host/registry.js";
import { declaredPlugins, scanPackages, type DeclaredPlugin, type ScannedPackage } from "../../plugin-host/scan.js";
import { bold, dim, printJson, println, warn, yellow } from "../output.js";
import { configFilePath } from "../../config/config-path.js";

export interface ListedPlugin {
  type: string;
  kind: string;
  description?: string;
  /** `wins`: this one is used; `lost`: a later package replaced it. */
  status: "wins" | "lost";
  lostTo?: string;
  /** What it replaced: `built-in provider agentpush`, or `provider x of package y`. */
  replaces?: string[];
}

export interface ListedPackage {
  id: string;
  builtin: boolean;
  resolvedFrom: PluginSource["resolvedFrom"];
  dir: string;
  version?: string;
  plugins: ListedPlugin[];
}

export interface AdapterListing {
  installDir: string;
  cwd: string;
  adapters: string[];
  loaded: boolean;
  builtins: ListedPackage[];
  packages: ListedPackage[];
  shadowed: Array<{ type: string; kind: string; winner: string; loser: string }>;
  failures: LoadFailure[];
}

export async function listAdapters(
  options: { env?: NodeJS.ProcessEnv; cwd?: string; load?: boolean } = {},
): Promise<AdapterListing> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const ids = await configuredIds(configFilePath(env));
  const scan = scanPackages({ ids, env, cwd });
  let packages = scan.packages;
  const failures = [...scan.failures];
  if (options.load) {
    const ok: ScannedPackage[] = [];
    for (const pkg of packages) {
      try {
        await importPackage(pkg);
        ok.push(pkg);
      } catch (err) {
        failures.push({
          package: pkg.label,
          phase: err instanceof PhaseError ? err.phase : "import",
          error: (err as Error).message,
        });
      }
    }
    packages = ok;
  }
  const declared = new KindTable(declaredPlugins(packages));
  const listed = packages.map((p) => listPackage(p, declared));
  return {
    installDir: installDir(env),
    cwd,
    adapters: ids,
    loaded: options.load === true,
    builtins: listed.filter((p) => p.builtin),
    packages: listed.filter((p) => !p.builtin),
    shadowed: declared.shadowed.map((s) => ({
      type: s.type,
      kind: s.kind,
      winner: s.winner.package,
      loser: s.loser.package,
    })),
    failures: inListedOrder(failures, ids),
  };
}

/** The raw `adapters` list (the full config schema is not loaded: `ls` is on the cold-start budget). */
async function configuredIds(path: string): Promise<string[]> {
  const raw = await readJsonFile<Record<string, unknown>>(path);
  const ids = raw?.adapters ?? [];
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string")) {
    throw new SvcError("config_invalid", `${path}: adapters must be an array of package ids (strings)`);
  }
  return ids;
}

function listPackage(pkg: ScannedPackage, declared: KindTable<DeclaredPlugin>): ListedPackage {
  const plugins = pkg.manifest.plugins.map((d): ListedPlugin => {
    const winner = declared.get(d.type, d.kind)!.source;
    const lost = winner !== pkg.source;
    const replaces = declared.shadowed
      .filter((s) => s.winner === pkg.source && s.type === d.type && s.kind === d.kind)
      .map((s) =>
        s.loser.builtin ? `built-in ${d.type} ${d.kind}` : `${d.type} ${d.kind} of package ${s.loser.package}`,
      );
    return {
      type: d.type,
      kind: d.kind,
      ...(d.description ? { description: d.description } : {}),
      status: lost ? "lost" : "wins",
      ...(lost ? { lostTo: winner.package } : {}),
      ...(replaces.length ? { replaces } : {}),
    };
  });
  const s = pkg.source;
  return {
    id: pkg.label,
    builtin: s.builtin,
    resolvedFrom: s.resolvedFrom,
    dir: s.dir,
    ...(s.version ? { version: s.version } : {}),
    plugins,
  };
}

export function printListing(l: AdapterListing, json: boolean): void {
  if (json) return printJson(l);
  println(bold("Built-in plugins"));
  for (const p of l.builtins) for (const line of pluginLines(p)) println(line);
  println();
  println(bold(`Adapters (config adapters, in load order; install location ${l.installDir}, then cwd ${l.cwd})`));
  if (l.adapters.length === 0) println(dim("  (none: add one with `svc adapters install <spec>`)"));
  for (const p of l.packages) {
    println(`  ${p.id}${p.version ? `@${p.version}` : ""}  ${dim(`resolved from ${p.resolvedFrom}: ${p.dir}`)}`);
    for (const line of pluginLines(p)) println("  " + line);
  }
  if (l.failures.length) {
    println();
    println(bold("Failures (not loaded)"));
    for (const f of l.failures) println(`  ${yellow(f.package)} (${f.phase}): ${f.error}`);
  }
  if (!l.loaded) println(dim("\n(manifests only; `svc adapters ls --load` also imports each plugin and checks it)"));
}

/**
 * `ls --load` exits 1 when a package failed to load (its import, shape or an earlier phase), and
 * says which on stderr; without `--load` only manifests are read and the exit code stays 0.
 */
export function failIfNotLoaded(l: AdapterListing): void {
  if (!l.loaded || l.failures.length === 0) return;
  warn(
    `${l.failures.length} adapter package(s) failed to load: ${[...new Set(l.failures.map((f) => `${f.package} (${f.phase})`))].join(", ")}`,
  );
  process.exitCode = 1;
}

function pluginLines(p: ListedPackage): string[] {
  return p.plugins.map((pl) => {
    const state =
      pl.status === "wins"
        ? `wins${pl.replaces ? ` (replaces ${pl.replaces.join(", ")})` : ""}`
        : yellow(`lost to ${pl.lostTo}`);
    return `  ${pl.type.padEnd(8)} ${pl.kind.padEnd(20)} ${state}${pl.description ? dim(`  ${pl.description}`) : ""}`;
  });
}
