/**
 * Adapter packages that fail to load: the plugin host's own load (scan, import, shape check, as
 * the daemon loads them at start; the doctor's target checks run it) reports each failure, told
 * here with its phase and what to do: an error, since what the user configured does not run.
 */
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { BUILTIN_PACKAGE } from "../../plugin-host/scan.js";
import type { LoadFailure } from "../../plugin-host/registry.js";

export function adapterLoadFindings(failures: readonly LoadFailure[]): DoctorFinding[] {
  return failures.map((f) => {
    const builtin = f.package.startsWith(`${BUILTIN_PACKAGE} (`);
    return {
      severity: "error",
      file: "config.json",
      message: `adapter package ${f.package} does not load (${f.phase}): ${f.error}; the daemon starts without ${f.declares?.length ? f.declares.map((d) => `${d.type} ${d.kind}`).join(", ") : "it"}`,
      fix: builtin
        ? "reinstall svc (a built-in plugin of this install is broken)"
        : `fix or update the package (svc adapters install ${f.package}), or remove it: svc adapters rm ${f.package}; see svc adapters ls --load`,
    };
  });
}
