/**
 * git, which agent worktrees need (`git worktree add|list --porcelain|remove --force --force`):
 * an error when it is missing or older than 2.17 (the first with `git worktree remove`).
 */
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { envFinding } from "./finding.js";
import { below, toolVersion, versionIn } from "./run-tool.js";

const FLOOR = [2, 17, 0] as const;

export async function checkGit(env: NodeJS.ProcessEnv): Promise<DoctorFinding[]> {
  const r = await toolVersion("git", env);
  const fix = "install git 2.17 or later (e.g. apt install git, brew install git) on the PATH svc runs with";
  if (!r.found)
    return [
      envFinding(
        "git",
        "error",
        "git is not on PATH: sessions with a worktree, `svc worktree` and swarm steps with worktrees fail",
        fix,
      ),
    ];
  const v = r.ok ? versionIn(r.output) : undefined;
  if (!v)
    return [
      envFinding(
        "git",
        "error",
        `\`git --version\` did not answer with a version (${r.output.slice(0, 200) || "no output"})`,
        fix,
      ),
    ];
  if (below(v, FLOOR))
    return [
      envFinding(
        "git",
        "error",
        `git ${v.join(".")} is older than 2.17: svc's worktree commands (git worktree remove) fail`,
        fix,
      ),
    ];
  return [];
}
