/**
 * The GitHub CLI, which the `local-gh` provider polls with (and the provenance shim wraps). Offline
 * only: it is looked for on PATH, and a login is looked for where gh keeps it (GH_TOKEN or
 * GITHUB_TOKEN, or a host in gh's hosts.yml); `gh auth status` is never run (it asks the network).
 * A warning when a sentinel uses `local-gh`, a note otherwise.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { SentinelView } from "../../plugin-api/context.js";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { envFinding } from "./finding.js";
import { toolVersion } from "./run-tool.js";

/** gh's config directory, as gh finds it: GH_CONFIG_DIR, else $XDG_CONFIG_HOME/gh, else ~/.config/gh. */
function ghConfigDir(env: NodeJS.ProcessEnv): string {
  if (env.GH_CONFIG_DIR) return env.GH_CONFIG_DIR;
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".config"), "gh");
}

/** Hosts gh holds a login for: top-level keys of hosts.yml (the token itself may be in the keyring). */
async function ghHosts(env: NodeJS.ProcessEnv): Promise<string[]> {
  const text = await readFile(join(ghConfigDir(env), "hosts.yml"), "utf8").catch(() => "");
  return [...text.matchAll(/^([^\s#:][^:]*):\s*$/gm)].map((m) => m[1]!.trim());
}

export async function checkGh(env: NodeJS.ProcessEnv, sentinels: SentinelView[]): Promise<DoctorFinding[]> {
  const users = sentinels.filter((s) => s.status === "active" && s.spec.provider === "local-gh").length;
  const severity = users > 0 ? "warn" : "info";
  const why =
    users > 0
      ? `${users} active sentinel(s) use the local-gh provider, which polls through gh`
      : "only the local-gh provider and provenance.wrapGh need it";
  const r = await toolVersion("gh", env);
  if (!r.found)
    return [
      envFinding(
        "gh",
        severity,
        `the GitHub CLI (gh) is not on PATH; ${why}`,
        "install gh (https://cli.github.com) and run `gh auth login`",
      ),
    ];
  if (env.GH_TOKEN || env.GITHUB_TOKEN || (await ghHosts(env)).length > 0) return [];
  return [
    envFinding(
      "gh",
      severity,
      `gh is installed but holds no login (no GH_TOKEN, GITHUB_TOKEN or host in ${join(ghConfigDir(env), "hosts.yml")}); ${why}`,
      "run `gh auth login` as the user the daemon runs as",
    ),
  ];
}
