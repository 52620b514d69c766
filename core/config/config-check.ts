/** `svc doctor`'s check of config.json (read-only): it parses and validates as the daemon would load it. */
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { homeFile } from "../storage/paths.js";
import { loadConfigFile } from "./load.js";

export async function checkConfigFile(home: string): Promise<DoctorFinding[]> {
  try {
    const loaded = await loadConfigFile(homeFile(home, "config"));
    return loaded.warnings.map((w) => ({ severity: "warn" as const, file: "config.json", message: w, fix: "fix the entry (svc config set …) or remove it" }));
  } catch (err) {
    return [{ severity: "error", file: "config.json", message: (err as Error).message, fix: "fix it (svc config set/unset, or by hand), or restore it from a backup: the daemon does not start while it is invalid" }];
  }
}
