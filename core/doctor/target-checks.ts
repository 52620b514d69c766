/**
 * The loaded target plugins' own checks (`TargetInstance.check`), reached through the plugin API
 * only: each target is set up offline (./offline-targets.ts) and asked to check its records.
 * Setting up the webhook target opens nothing (its outbox opens on first use), so its check
 * reads the files itself; given `teamDatabase`, it checks its tables instead.
 */
import type { HostServices, SentinelView } from "../plugin-api/context.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { offlineTargets } from "./offline-targets.js";

export async function checkTargets(
  home: string,
  sentinels: SentinelView[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  services: Partial<Pick<HostServices, "teamDatabase">> = {},
): Promise<DoctorFinding[]> {
  const { instances, findings: out } = await offlineTargets({ home, env, cwd, services });
  for (const [kind, instance] of instances) {
    if (typeof instance.check !== "function") continue;
    try {
      out.push(...(await instance.check({ sentinels })));
    } catch (err) {
      out.push({
        severity: "warn",
        file: ".",
        message: `the check of target "${kind}" failed: ${(err as Error).message}`,
        fix: "run svc doctor again; if it keeps failing, report it",
      });
    }
  }
  return out;
}
