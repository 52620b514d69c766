/**
 * `svc doctor`'s environment section: what svc runs with and on, beside its files. Each check is
 * its own module; all are offline (no DNS, no network: local tools' `--version`, a listen attempt
 * on the daemon's own port, a loopback `/health`) and read-only.
 */
import type { ConfigSnapshot } from "../../config/config-service.js";
import type { SentinelView } from "../../plugin-api/context.js";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { checkAllowSubnets } from "./allow-subnets.js";
import { checkConfigKeys } from "./config-keys.js";
import { checkExtraCaCerts } from "./extra-ca-certs.js";
import { checkGh } from "./gh.js";
import { checkGit } from "./git.js";
import { checkNodeVersion } from "./node-version.js";
import { checkDaemonPort } from "./port.js";
import { checkSecretFiles } from "./secret-files.js";
import { checkServiceUnit } from "./service-unit.js";

export interface EnvironmentInput {
  home: string;
  env: NodeJS.ProcessEnv;
  /** The configuration, when config.json loads (an invalid one is already an error). */
  config: Pick<ConfigSnapshot, "raw" | "effective"> | undefined;
  sentinels: SentinelView[];
  /** A daemon runs for this home (runtime.json with a live pid). */
  daemonRunning: boolean;
}

export async function checkEnvironment(input: EnvironmentInput): Promise<DoctorFinding[]> {
  const { env, config } = input;
  const daemon = config?.effective.daemon;
  const groups = await Promise.all([
    checkNodeVersion(),
    checkGit(env),
    checkGh(env, input.sentinels),
    daemon ? checkDaemonPort(daemon.bind, daemon.port, input.daemonRunning) : [],
    checkExtraCaCerts(env),
    config ? checkAllowSubnets(input.sentinels, config.effective.webhooks.allowSubnets) : [],
    config ? checkConfigKeys(config.raw) : [],
    checkSecretFiles(input.home),
    checkServiceUnit(input.home, env),
  ]);
  return groups.flat();
}
