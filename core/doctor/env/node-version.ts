/**
 * The Node.js that runs svc: an error below package.json's `engines.node` floor (svc may not run),
 * a warning below 22 (Node 20 reached its end of life in April 2026: no more security fixes).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { svcRoot } from "../../plugin-host/locations.js";
import { envFinding } from "./finding.js";
import { below, versionIn } from "./run-tool.js";

/** The lowest supported release after Node 20's end of life. */
export const SUPPORTED_NODE_MAJOR = 22;

/** `engines.node` of svc's package.json (`>=20.19`). */
export function enginesFloor(): string {
  const pj = JSON.parse(readFileSync(join(svcRoot(), "package.json"), "utf8")) as { engines?: { node?: string } };
  return pj.engines?.node ?? ">=0";
}

export function checkNodeVersion(version = process.versions.node, floor = enginesFloor()): DoctorFinding[] {
  const have = versionIn(version);
  const min = versionIn(floor);
  if (!have) return [];
  const fix = `run svc with Node ${SUPPORTED_NODE_MAJOR} or 24 (the current LTS releases)`;
  if (min && below(have, min))
    return [
      envFinding(
        "node",
        "error",
        `Node ${version} runs svc, below its engines floor ${floor}: svc may not start or may fail at run time`,
        fix,
      ),
    ];
  if (have[0] < SUPPORTED_NODE_MAJOR)
    return [
      envFinding(
        "node",
        "warn",
        `Node ${version} runs svc: Node ${have[0]} is past its end of life (no more security fixes)`,
        fix,
      ),
    ];
  return [];
}
