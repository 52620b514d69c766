import { resolvePresetCwd } from "../config/local-paths.js";
import type { TerminalPreset } from "../config/schema.js";
import { SvcError } from "../errors.js";

/**
 * Resolves `svc sessions terminal` input against the local `terminalPresets`: trailing argv wins
 * over the preset's; the given cwd wins over the preset's, `~/` expanded and a relative one
 * resolved against the CLI's cwd (the CLI sends it absolute).
 */
export function resolvePresetLaunch(
  presets: Record<string, TerminalPreset> | undefined,
  input: { preset?: string; argv?: string[]; cwd?: string; cliCwd?: string },
): { argv: string[]; env: Record<string, string>; cwd?: string; workspace?: string; name?: string; label?: string } {
  let preset: TerminalPreset = {};
  if (input.preset !== undefined) {
    const found = presets?.[input.preset];
    if (!found)
      throw new SvcError(
        "not_found",
        `no terminal preset "${input.preset}"; presets in terminalPresets: ${Object.keys(presets ?? {}).join(", ") || "(none)"}`,
      );
    preset = found;
  }
  const argv = input.argv && input.argv.length > 0 ? input.argv : preset.argv;
  if (!argv || argv.length === 0) {
    throw new SvcError(
      "usage",
      input.preset
        ? `terminal preset "${input.preset}" has no argv; pass the command after \`--\``
        : "pass a command after `--`, or a --preset with argv",
    );
  }
  const cwd = resolvePresetCwd({ cwd: input.cwd ?? preset.cwd }, input.cliCwd ?? process.cwd());
  return { argv, env: preset.env ?? {}, cwd, workspace: preset.workspace, name: preset.name, label: preset.label };
}

/**
 * The directory of a workspace slug: `<worktrees root>/<repoName>/<slug>` (the worktree layout),
 * the first repository that has it. Undefined when none does.
 */
export async function findWorkspaceDir(worktreesRoot: string, slug: string): Promise<string | undefined> {
  const { readdir, stat } = await import("node:fs/promises");
  const { join } = await import("node:path");
  const repos = await readdir(worktreesRoot).catch(() => [] as string[]);
  for (const repo of repos.sort()) {
    const dir = join(worktreesRoot, repo, slug);
    if ((await stat(dir).catch(() => undefined))?.isDirectory()) return dir;
  }
  return undefined;
}
