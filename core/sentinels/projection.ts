import type { TargetInstance } from "../plugin-api/target.js";
import { redactUrlsDeep } from "../redaction/url.js";
import type { SentinelProjection, SentinelRecord } from "./service.js";

/**
 * A record as listings and get views show it: the target only through its plugin's `project`
 * (never the stored form, which may hold references to secrets), and the live delivery count.
 * A target whose plugin is not loaded shows as `{kind, unavailable: true}`. Every URL in the
 * projected target has its credentials redacted (userinfo, query values: core/redaction/url.ts),
 * whatever the plugin projects: this is what REST, MCP, the CLI and the dashboard list.
 */
export function projectSentinel(
  rec: SentinelRecord,
  target: TargetInstance | undefined,
  delivered: number,
): SentinelProjection {
  const projected = redactUrlsDeep(
    target ? target.project(rec.spec.target, { sentinelId: rec.id }) : { unavailable: true },
  ) as Record<string, unknown>;
  const { target: _stored, ...spec } = rec.spec;
  return {
    id: rec.id,
    status: rec.status,
    createdAt: rec.createdAt,
    updatedAt: rec.updatedAt,
    deliveredCount: Math.max(rec.deliveredCount, delivered),
    ...(rec.endedAt !== undefined ? { endedAt: rec.endedAt } : {}),
    ...(rec.endedReason !== undefined ? { endedReason: rec.endedReason } : {}),
    spec: { ...spec, target: { ...projected, kind: rec.spec.target.kind } },
  };
}
