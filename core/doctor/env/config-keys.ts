/**
 * config.json keys that act on nothing in this build. Every key the schema declares is read by
 * some module (see docs/configuration.md); what acts on nothing is a key the schema does not know:
 * svc keeps it (unknown keys are preserved, SPEC.md) and ignores it. Each is told with the key svc
 * most likely meant, as `svc config set` does (unknown-keys.ts).
 */
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { unknownKeyWarning } from "../../config/unknown-keys.js";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function checkConfigKeys(raw: Record<string, unknown>): DoctorFinding[] {
  const out: DoctorFinding[] = [];
  const walk = (node: Record<string, unknown>, segs: string[]) => {
    for (const [key, value] of Object.entries(node)) {
      const at = [...segs, key];
      const warning = unknownKeyWarning(at);
      if (warning) {
        out.push({
          severity: "warn",
          file: "config.json",
          message: warning,
          fix: `svc config unset ${at.join(".")} (or set the key it meant)`,
        });
      } else if (isObject(value)) walk(value, at);
    }
  };
  walk(raw, []);
  return out;
}
