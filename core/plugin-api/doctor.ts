import type { SentinelView } from "./context.js";

/**
 * `svc doctor`'s findings (docs/operations.md, "svc doctor"): each store checks its own files,
 * offline and read-only, and says what is wrong and what to do.
 * - `error`: damage in a live file (something svc needs can no longer be read, or a secret file
 *   others can read); the home is not healthy.
 * - `warn`: something to look at, nothing lost now (a `.damaged-*` copy svc kept, an orphan).
 * - `info`: crash residue svc handles at its next start (a torn tail), or context.
 */
export type DoctorSeverity = "error" | "warn" | "info";

export interface DoctorFinding {
  severity: DoctorSeverity;
  /** The file (or folder) concerned, relative to `$SVC_HOME`. */
  file: string;
  /** What is wrong (never a secret, a body or a URL's path). */
  message: string;
  /** What to do about it. */
  fix: string;
}

/** What a target's {@link TargetInstance.check} is given: every stored sentinel (active and expired). */
export interface TargetCheckInput {
  sentinels: SentinelView[];
}
