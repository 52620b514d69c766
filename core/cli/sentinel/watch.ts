/** `svc sentinel watch`: builds a SentinelSpec with a session target and POSTs it to the daemon. */
import { DaemonClient } from "../daemon-client.js";
import { printJson, println, usageError } from "../output.js";
import { checkIdempotencyKey } from "../../sentinels/idempotency.js";
import type { SentinelProjection } from "../../sentinels/service.js";

export interface WatchOptions {
  pr?: string;
  types?: string;
  until?: string;
  provider?: string;
  session: string;
  urgency?: string;
  label?: string;
  group?: string;
  idempotencyKey?: string;
  json?: boolean;
}

/** `https://github.com/acme/api/pull/42` → `github:acme/api#42`. */
export function prSubject(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw usageError(
      `--pr expects a pull request URL like https://github.com/<owner>/<repo>/pull/<n>, got ${JSON.stringify(url)}`,
    );
  }
  const m = /^\/([^/]+)\/([^/]+)\/pull\/(\d+)\/?$/.exec(u.pathname);
  if (u.protocol !== "https:" || !m)
    throw usageError(
      `--pr expects a pull request URL like https://github.com/<owner>/<repo>/pull/<n>, got ${JSON.stringify(url)}`,
    );
  return `github:${m[1]}/${m[2]}#${m[3]}`;
}

/** Parses `--until`: never | count:<n> | at:<ISO or ms> | subject_terminal. */
export function parseUntil(text: string): Record<string, unknown> {
  if (text === "never" || text === "subject_terminal") return { kind: text };
  const count = /^count:(\d+)$/.exec(text);
  if (count) {
    const n = Number(count[1]);
    if (n < 1) throw usageError("--until count:<n> needs n of at least 1");
    return { kind: "count", n };
  }
  if (text.startsWith("at:")) {
    const v = text.slice(3);
    const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isFinite(ms))
      throw usageError(`--until at:<time> needs an ISO-8601 time or epoch milliseconds, got ${JSON.stringify(v)}`);
    return { kind: "at", ms };
  }
  throw usageError(
    `--until must be never, count:<n>, at:<ISO time or epoch ms> or subject_terminal, got ${JSON.stringify(text)}`,
  );
}

/** Match clauses for `subjects`, each with the `--types` globs (comma-separated) when given. */
export function matchClauses(
  subjects: readonly string[],
  typesFlag: string | undefined,
): Array<Record<string, unknown>> {
  const types = typesFlag
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  if (typesFlag !== undefined && !types?.length) throw usageError("--types needs at least one type glob");
  return subjects.map((subject) => ({ subject, ...(types ? { types } : {}) }));
}

export function buildWatchSpec(subject: string | undefined, opts: WatchOptions): Record<string, unknown> {
  if ((subject === undefined) === (opts.pr === undefined))
    throw usageError("give either a <subject> or --pr <url>, not both");
  const s = subject ?? prSubject(opts.pr!);
  return {
    match: matchClauses([s], opts.types),
    until: parseUntil(opts.until ?? (opts.pr ? "subject_terminal" : "never")),
    target: { kind: "session", sessionId: opts.session, ...(opts.urgency ? { urgency: opts.urgency } : {}) },
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(opts.label ? { label: opts.label } : {}),
    ...(opts.group ? { group: opts.group } : {}),
  };
}

/**
 * `POST /sentinels`, with `--idempotency-key` as the `Idempotency-Key` header (checked here by the
 * daemon's own rule, so a bad key is a usage error before anything is sent).
 */
export async function postSentinel(
  spec: Record<string, unknown>,
  idempotencyKey: string | undefined,
): Promise<SentinelProjection> {
  if (idempotencyKey !== undefined) {
    try {
      checkIdempotencyKey(idempotencyKey);
    } catch (err) {
      throw usageError(`--idempotency-key: ${(err as Error).message}`);
    }
  }
  const headers: Record<string, string> = idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey };
  return (await DaemonClient.connect()).request<SentinelProjection>("POST", "/sentinels", spec, { headers });
}

export async function watch(subject: string | undefined, opts: WatchOptions): Promise<void> {
  const spec = buildWatchSpec(subject, opts);
  const created = await postSentinel(spec, opts.idempotencyKey);
  if (opts.json) return printJson(created);
  println(
    `${created.id} watching ${created.spec.match.map((m) => m.subject).join(", ")} (provider ${created.spec.provider}) → session ${opts.session}`,
  );
}
