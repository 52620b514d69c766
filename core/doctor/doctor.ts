/**
 * `svc doctor`: an offline, read-only check of every file under `$SVC_HOME`. Each store offers its
 * own check beside its code; this only gathers them (docs/operations.md, "svc doctor").
 */
import "reflect-metadata";
import { checkConfigFile } from "../config/config-check.js";
import { checkRuntimeFile } from "../daemon/runtime-file.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { checkDedupFiles } from "../sentinels/dedup-check.js";
import { checkSentinelsFile } from "../sentinels/store.js";
import { checkCredentialsFile } from "../storage/credentials.js";
import { checkWorktreeRecords } from "../workspaces/records.js";
import { checkTargets } from "./target-checks.js";
import { FileConfigService } from "../config/file-config-service.js";
import { checkSteward } from "../steward/doctor-check.js";
import { homeFile } from "../storage/paths.js";
import { checkEnvironment } from "./env/environment.js";

export interface DoctorReport {
  /** No `error` finding (warnings and notes allowed). */
  healthy: boolean;
  home: string;
  findings: DoctorFinding[];
}

const ORDER = { error: 0, warn: 1, info: 2 } as const;

export async function runDoctor(
  home: string,
  /** `environment: false` checks the files only (no tools, port, Node version). */
  options: { env?: NodeJS.ProcessEnv; cwd?: string; environment?: boolean } = {},
): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const findings: DoctorFinding[] = [];
  const runtime = await checkRuntimeFile(home);
  findings.push(...runtime.findings);
  findings.push(...(await checkConfigFile(home)));
  const stored = await checkSentinelsFile(home);
  findings.push(...stored.findings);
  findings.push(...(await checkCredentialsFile(home)));
  findings.push(...(await checkDedupFiles(home, new Set(stored.sentinels.map((s) => s.id)))));
  findings.push(...(await checkWorktreeRecords(home)));
  findings.push(...(await checkTargets(home, stored.sentinels, env, options.cwd ?? process.cwd())));
  // A config file that does not load is already an error above.
  const config = await FileConfigService.open(homeFile(home, "config"), env, {}).catch(() => undefined);
  if (config) findings.push(...(await checkSteward(config.current())));
  if (options.environment !== false)
    findings.push(
      ...(await checkEnvironment({
        home,
        env,
        config: config?.current(),
        sentinels: stored.sentinels,
        daemonRunning: runtime.running !== undefined,
      })),
    );
  // Stable order: errors first, then by file.
  const sorted = findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => ORDER[a.f.severity] - ORDER[b.f.severity] || a.f.file.localeCompare(b.f.file) || a.i - b.i);
  const out = sorted.map((x) => x.f);
  return { healthy: !out.some((f) => f.severity === "error"), home, findings: out };
}
