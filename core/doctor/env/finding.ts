/**
 * Environment findings name what they checked, not a file under `$SVC_HOME`: `env:node`,
 * `env:git`, `env:gh`, `env:port`, `env:NODE_EXTRA_CA_CERTS` (docs/operations.md, "svc doctor").
 */
import type { DoctorFinding, DoctorSeverity } from "../../plugin-api/doctor.js";

export function envFinding(what: string, severity: DoctorSeverity, message: string, fix: string): DoctorFinding {
  return { severity, file: `env:${what}`, message, fix };
}
