/**
 * `svc doctor`: an offline, read-only check of every file under `$SVC_HOME`. Each store offers its
 * own check beside its code; this only gathers them (docs/operations.md, "svc doctor").
 */
import "reflect-metadata";
import { join } from "node:path";
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
import { FILES, homeFile } from "../storage/paths.js";
import { checkJournalLengths } from "../storage/journal-length-check.js";
import { USAGE_DIR } from "../llm-endpoint/usage-log.js";
import { checkEnvironment } from "./env/environment.js";
import type { SentinelView } from "../plugin-api/context.js";
import type { SentinelRecord } from "../sentinels/service.js";
import { storeOfConfig } from "../store/select.js";

export interface DoctorReport {
  /** No `error` finding (warnings and notes allowed). */
  healthy: boolean;
  home: string;
  /** `file` (the home's files), or the team store checked: host:port/database, never a password. */
  store: string;
  findings: DoctorFinding[];
}

const ORDER = { error: 0, warn: 1, info: 2 } as const;

export async function runDoctor(
  home: string,
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** `false` checks the stored records only (no tools, port, Node version). */
    environment?: boolean;
    /** The store to check: default the configured one (`SVC_STORE_URL`, config `store.url`, else the files). */
    store?: "file" | { url: string };
  } = {},
): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const findings: DoctorFinding[] = [];
  const runtime = await checkRuntimeFile(home);
  findings.push(...runtime.findings);
  findings.push(...(await checkConfigFile(home, runtime.running !== undefined)));
  // A config file that does not load is already an error above.
  const config = await FileConfigService.open(homeFile(home, "config"), env, {}).catch(() => undefined);
  const snapshot = config?.current();
  let url: string | undefined;
  if (options.store === undefined) {
    try {
      const choice = snapshot ? storeOfConfig(snapshot) : undefined;
      if (choice?.kind === "postgres") url = choice.url;
    } catch (err) {
      findings.push({
        severity: "error",
        file: "config.json",
        message: `${(err as Error).message}: the daemon refuses to start`,
        fix: "set it to postgres://user@host:port/database, or unset it to keep the files of this home",
      });
    }
  } else if (options.store !== "file") url = options.store.url;
  let store = "file";
  let stored: { findings: DoctorFinding[]; sentinels: SentinelRecord[] | SentinelView[] };
  if (url !== undefined) {
    // Team mode: the sentinels and the targets' records live in PostgreSQL (loaded only then).
    const { checkTeamStore } = await import("./team-store.js");
    const { describeStore } = await import("../store/postgres/errors.js");
    store = describeStore(url);
    stored = await checkTeamStore({ home, url, env, cwd, config: snapshot });
  } else stored = await checkSentinelsFile(home);
  findings.push(...stored.findings);
  findings.push(...(await checkCredentialsFile(home)));
  findings.push(...(await checkDedupFiles(home, new Set(stored.sentinels.map((s) => s.id)))));
  findings.push(...(await checkWorktreeRecords(home)));
  // Every append journal under the home (the outbox's at its top, the dedup's, the usage log's).
  findings.push(...(await checkJournalLengths(home, [home, join(home, FILES.sentinelsDedup), join(home, USAGE_DIR)])));
  if (store === "file") findings.push(...(await checkTargets(home, stored.sentinels, env, cwd)));
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
  return { healthy: !out.some((f) => f.severity === "error"), home, store, findings: out };
}
