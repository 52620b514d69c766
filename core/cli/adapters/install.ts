/**
 * `svc adapters install <spec>` and `svc install runtime-profile/<slug>`: npm install into the
 * install location, validate what got installed and load it in a scratch host (rolled back when
 * invalid or when it does not load), then list it in config `adapters`.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { loadConfigFile } from "../../config/load.js";
import { SvcError } from "../../errors.js";
import { installDir } from "../../plugin-host/locations.js";
import { loadManifest, PhaseError, readRawManifest } from "../../plugin-host/manifest.js";
import type { AdapterManifest } from "../../plugin-host/manifest-schema.js";
import { readPackageJson, resolvePackage } from "../../plugin-host/resolve-package.js";
import { checkPackageLoads } from "../../plugin-host/scratch-load.js";
import { println } from "../output.js";
import { configFilePath } from "../../config/config-path.js";
import { editAdapters } from "./config-adapters.js";
import { runNpm } from "./npm.js";

export interface InstallOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** `true`: the package must carry a valid adapter manifest. `"optional"`: only validated when present. */
  manifest: true | "optional";
}

export interface InstallResult {
  name: string;
  version?: string;
  dir: string;
  manifest?: AdapterManifest;
  /** Whether the id is (now) listed in config `adapters`. */
  listed: boolean;
}

export async function installPackage(spec: string, options: InstallOptions): Promise<InstallResult> {
  const env = options.env ?? process.env;
  const dir = installDir(env);
  const npmSpec = localSpec(spec, options.cwd ?? process.cwd()) ?? spec;
  await loadConfigFile(configFilePath(env)); // a broken config.json is reported before anything is installed
  const saved = snapshot(dir);
  println(`installing ${spec} into ${dir}`);
  await runNpm(["install", npmSpec], dir, env);
  const name = installedName(saved.deps, dir, npmSpec);
  let manifest: AdapterManifest | undefined;
  let pkgDir: string;
  let version: string | undefined;
  try {
    const resolved = resolvePackage(name, [{ from: "install", dir }]);
    pkgDir = resolved.dir;
    version = typeof resolved.packageJson.version === "string" ? resolved.packageJson.version : undefined;
    if (options.manifest === true || readRawManifest(resolved.dir, resolved.packageJson)) {
      manifest = loadManifest(resolved.dir, resolved.packageJson);
      // An entry that points at no file would only fail at load (svc adapters ls --load); refuse now.
      const missing = manifest.plugins.filter((p) => !existsSync(join(resolved.dir, p.entry)));
      if (missing.length) {
        throw new PhaseError(
          "validate",
          `its manifest declares ${missing.map((p) => `${p.type} ${p.kind} at ${p.entry}`).join(", ")}, but no such file is in the package (build it first, or check "files" in its package.json)`,
        );
      }
      // What would only fail in the daemon (a syntax error, a default export of the wrong kind, a
      // setup that throws or hangs) is found now, in a scratch host, and refused.
      println(`checking that it loads (import, shape, setup) in a scratch host`);
      const report = await checkPackageLoads(resolved.dir, { env });
      if (!report.ok) throw new PhaseError(report.phase, `it does not load (phase ${report.phase}): ${report.error}`);
    }
  } catch (err) {
    await rollback(dir, name, saved, env);
    const why = err instanceof PhaseError ? err.message : `cannot find it after installing: ${(err as Error).message}`;
    throw new SvcError(
      "invalid_input",
      `refused ${name}: ${why}. The install was rolled back; config.json is unchanged.`,
    );
  }
  let listed = false;
  if (manifest) {
    const ids = await editAdapters(configFilePath(env), (ids) => (ids.includes(name) ? ids : [...ids, name]));
    listed = true;
    println(`installed ${name}${version ? `@${version}` : ""}; adapters: ${ids.join(", ")}`);
    for (const p of manifest.plugins) println(`  ${p.type} ${p.kind}${p.description ? `  ${p.description}` : ""}`);
  } else {
    println(`installed ${name}${version ? `@${version}` : ""}; it has no adapter manifest, so adapters is unchanged`);
  }
  return { name, ...(version ? { version } : {}), dir: pkgDir, ...(manifest ? { manifest } : {}), listed };
}

/** An absolute path for a folder or tarball spec given relative to the cwd; `undefined` for other specs. */
function localSpec(spec: string, cwd: string): string | undefined {
  const path = spec.startsWith("file:") ? spec.slice(5) : spec;
  const looksLocal =
    /^(\.{1,2}[\\/]|[\\/]|~[\\/])/.test(path) || /\.(tgz|tar\.gz|tar)$/.test(path) || spec.startsWith("file:");
  if (!looksLocal) return undefined;
  const abs = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(abs)) throw new SvcError("invalid_input", `${spec}: no such folder or tarball (${abs})`);
  return abs;
}

interface Snapshot {
  files: Record<string, string | undefined>;
  deps: Record<string, string>;
}

function snapshot(dir: string): Snapshot {
  const files: Record<string, string | undefined> = {};
  for (const f of ["package.json", "package-lock.json"]) {
    const p = join(dir, f);
    files[f] = existsSync(p) ? readFileSync(p, "utf8") : undefined;
  }
  return { files, deps: files["package.json"] ? depsOf(JSON.parse(files["package.json"])) : {} };
}

function depsOf(pj: Record<string, unknown>): Record<string, string> {
  return {
    ...((pj.dependencies as Record<string, string>) ?? {}),
    ...((pj.optionalDependencies as Record<string, string>) ?? {}),
  };
}

/** The name of what npm just installed: the dependency it added, else the name the spec gives. */
function installedName(before: Record<string, string>, dir: string, spec: string): string {
  const after = depsOf(readPackageJson(dir));
  const added = Object.keys(after).filter((k) => before[k] === undefined || before[k] !== after[k]);
  if (added.length === 1) return added[0]!;
  if (isAbsolute(spec) && existsSync(spec) && statSync(spec).isDirectory()) return readPackageJson(spec).name ?? spec;
  const m = /^(@[^/@]+\/[^@]+|[^@]+)(@.*)?$/.exec(spec);
  if (m && after[m[1]!] !== undefined) return m[1]!;
  throw new SvcError(
    "internal",
    `installed ${spec} but cannot tell which package it was; check ${join(dir, "package.json")}`,
  );
}

async function rollback(dir: string, name: string, saved: Snapshot, env: NodeJS.ProcessEnv): Promise<void> {
  const wasThere = saved.deps[name] !== undefined;
  if (!wasThere) await runNpm(["uninstall", name], dir, env).catch(() => undefined);
  for (const [f, text] of Object.entries(saved.files)) {
    if (text === undefined) rmSync(join(dir, f), { force: true });
    else writeFileSync(join(dir, f), text);
  }
  if (wasThere) await runNpm(["install"], dir, env).catch(() => undefined);
}
