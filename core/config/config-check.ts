/**
 * `svc doctor`'s check of config.json (read-only): it parses and validates as the daemon would
 * load it, and a file holding secrets that group or others can read is told (file-mode.ts).
 */
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { homeFile } from "../storage/paths.js";
import { describeExposed, exposedSecrets } from "./file-mode.js";
import { loadConfigFile } from "./load.js";
import { openDoorRefusal } from "../daemon/open-door.js";

/**
 * `daemonRunning`: a daemon runs for this home, so it had a token however config.json reads (the
 * `--auth-token-file` flag, or one unset since): an open door in the file is then a warning (the
 * next start without that flag is refused), else an error (the daemon does not start).
 */
export async function checkConfigFile(home: string, daemonRunning = false): Promise<DoctorFinding[]> {
  const path = homeFile(home, "config");
  try {
    const loaded = await loadConfigFile(path);
    const findings: DoctorFinding[] = loaded.warnings.map((w) => ({
      severity: "warn" as const,
      file: "config.json",
      message: w,
      fix: "fix the entry (svc config set …) or remove it",
    }));
    const exposed = loaded.exists ? await exposedSecrets(path, loaded.raw) : undefined;
    if (exposed) {
      findings.push({
        severity: "warn",
        file: "config.json",
        message: `it ${describeExposed(exposed)}`,
        fix: `chmod 600 ${JSON.stringify(path)}; if others could read it, treat those secrets as exposed and rotate them`,
      });
    }
    // The daemon as config.json would start it (a running one says for itself, in runtime.json).
    const daemon = (loaded.config as { daemon?: { bind?: string; authToken?: string } }).daemon;
    const door = daemon?.bind ? openDoorRefusal({ bind: daemon.bind, authToken: daemon.authToken }) : undefined;
    if (door)
      findings.push({
        severity: daemonRunning ? "warn" : "error",
        file: "config.json",
        message: door,
        fix: "svc config set daemon.authToken < token-file (a long random token), or svc config set daemon.bind 127.0.0.1",
      });
    return findings;
  } catch (err) {
    return [
      {
        severity: "error",
        file: "config.json",
        message: (err as Error).message,
        fix: "fix it (svc config set/unset, or by hand), or restore it from a backup: the daemon does not start while it is invalid",
      },
    ];
  }
}
