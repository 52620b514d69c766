/**
 * Typed errors, end to end. A code is a stable string (SPEC.md's reason strings plus ours);
 * the HTTP status for each code lives in one table, {@link httpStatusFor}.
 */
import { basename } from "node:path";

const BRAND = Symbol.for("svc.error");

export type SvcErrorCode =
  // generic
  | "invalid_input"
  | "usage"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "unauthorized"
  | "forbidden"
  | "payload_too_large"
  | "not_implemented"
  | "unavailable"
  | "internal"
  | "config_invalid"
  | "daemon_not_running"
  | "daemon_running"
  | "plugin_load_failed"
  // idempotent creates: a key reused with a different request
  | "idempotency_key_reused"
  // workspaces
  | "provision_failed"
  // sessions: the session's adapter or agent cannot resume it
  | "not_resumable"
  // challenge verification (SPEC.md Errors)
  | "challenge_failed"
  | "timeout"
  | "non_https"
  | "ssrf_blocked"
  | "non_2xx"
  // SSRF gate
  | "private_target"
  | "redirect"
  | "connect"
  | "tls_untrusted"
  // outbox dead reasons
  | "delivered_rejected"
  | "sentinel_expired"
  | "sentinel_removed"
  | "age_out"
  // team mode (core/store): the shared PostgreSQL store
  | "store_url_invalid"
  | "store_unreachable"
  | "store_auth_failed"
  | "store_schema_newer"
  | "store_key_missing"
  | "store_key_mismatch";

export interface SvcErrorDetail {
  path: string;
  message: string;
}

export interface SvcErrorOptions {
  details?: SvcErrorDetail[] | Record<string, unknown>;
  cause?: unknown;
}

export class SvcError extends Error {
  readonly code: SvcErrorCode;
  readonly details?: SvcErrorDetail[] | Record<string, unknown>;

  constructor(code: SvcErrorCode, message: string, options: SvcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SvcError";
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Recognises an SvcError even when it comes from another copy of this package. */
  static is(value: unknown): value is SvcError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }

  toJSON(): { code: string; message: string; details?: unknown } {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

/** The one table from error code to HTTP status. The README reproduces it. */
export const HTTP_STATUS: Readonly<Record<SvcErrorCode, number>> = {
  invalid_input: 400,
  usage: 400,
  config_invalid: 400,
  challenge_failed: 422,
  non_https: 422,
  ssrf_blocked: 422,
  private_target: 422,
  redirect: 422,
  tls_untrusted: 422,
  non_2xx: 422,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_key_reused: 422,
  payload_too_large: 413,
  delivered_rejected: 422,
  sentinel_expired: 410,
  sentinel_removed: 410,
  age_out: 410,
  internal: 500,
  plugin_load_failed: 500,
  provision_failed: 422,
  not_resumable: 409,
  not_implemented: 501,
  timeout: 504,
  connect: 502,
  unavailable: 503,
  daemon_not_running: 503,
  daemon_running: 409,
  store_url_invalid: 400,
  // the database is down or restarting: the caller tries again (a push is answered 503, never 500)
  store_unreachable: 503,
  store_auth_failed: 503,
  store_schema_newer: 503,
  store_key_missing: 503,
  store_key_mismatch: 500,
};

export function httpStatusFor(code: string): number {
  return (HTTP_STATUS as Record<string, number>)[code] ?? 500;
}

/** Converts zod issues into `{path, message}` details (dotted paths, `[i]` for indexes). */
export function issuesToDetails(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  prefix = "",
): SvcErrorDetail[] {
  return issues.map((issue) => ({ path: formatPath(prefix, issue.path), message: issue.message }));
}

export function formatPath(prefix: string, path: ReadonlyArray<PropertyKey>): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || "(root)";
}

/**
 * Wraps anything thrown into an SvcError. Anything that is not an SvcError becomes `internal` with
 * its own message kept verbatim (for logs and the CLI's own output); that message may quote paths
 * or inputs, so what goes to a remote caller is {@link toPublicError}.
 */
export function toSvcError(err: unknown): SvcError {
  if (SvcError.is(err)) return err;
  const full = diskFullError(err);
  if (full) return full;
  const message = err instanceof Error ? err.message : String(err);
  return new SvcError("internal", message, { cause: err });
}

/** The message a remote caller gets for anything thrown that is not an SvcError. */
const INTERNAL_ERROR_MESSAGE = "internal error; the daemon log has the cause";

/**
 * What a remote caller (an HTTP error body) may see: an SvcError as it is (its message was
 * written for the caller); anything else as `internal` with a generic message, so an unexpected
 * error's text never leaves the process. The catcher logs the original ({@link toSvcError}).
 */
export function toPublicError(err: unknown): SvcError {
  if (SvcError.is(err)) return err;
  return diskFullError(err) ?? new SvcError("internal", INTERNAL_ERROR_MESSAGE, { cause: err });
}

/**
 * A full disk (or quota) is the caller's to fix and passes once space is freed: `unavailable`
 * (503) saying so, instead of an `internal` error whose cause only the log has. The file is named
 * when the system call had a path.
 */
export function diskFullError(err: unknown): SvcError | undefined {
  const e = err as NodeJS.ErrnoException | null;
  if (typeof e !== "object" || e === null || (e.code !== "ENOSPC" && e.code !== "EDQUOT")) return undefined;
  const file = typeof e.path === "string" ? ` writing ${basename(e.path)}` : "";
  const what = e.code === "ENOSPC" ? "the disk is full" : "the disk quota is used up";
  return new SvcError(
    "unavailable",
    `${what} (${e.code}${file}): free space on the filesystem of svc's files ($SVC_HOME), then try again`,
    { cause: err },
  );
}
