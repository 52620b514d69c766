/**
 * Path rules of the configuration that depend on where the caller runs: terminal preset `cwd`
 * (relative to the CLI's cwd) and per-repo provisioning caps (full path or bare directory name).
 */
import { basename, isAbsolute, resolve } from "node:path";
import { expandTilde } from "../storage/paths.js";
import type { EffectiveConfig } from "./config-service.js";
import type { TerminalPreset } from "./schema.js";

/** A preset's working directory: absolute as is, `~/` expanded, relative against `cliCwd`; undefined when the preset has none. */
export function resolvePresetCwd(preset: TerminalPreset, cliCwd: string): string | undefined {
  if (preset.cwd === undefined) return undefined;
  const p = expandTilde(preset.cwd);
  return isAbsolute(p) ? p : resolve(cliCwd, p);
}

/**
 * The extra provisioning cap for a repository, if `worktrees.provisionConcurrencyByRepo` has one:
 * an entry naming its absolute path wins over one naming its directory name.
 */
export function provisionCapFor(cfg: EffectiveConfig, repoPath: string): number | undefined {
  const caps = cfg.worktrees.provisionConcurrencyByRepo;
  const abs = resolve(repoPath);
  if (caps[abs] !== undefined) return caps[abs];
  const name = basename(abs);
  return Object.hasOwn(caps, name) ? caps[name] : undefined;
}
