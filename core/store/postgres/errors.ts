/**
 * What a `pg` error means to a caller: the server cannot be reached or is restarting
 * (`store_unreachable`, 503: try again), the login was refused (`store_auth_failed`), or a
 * statement failed (`internal`, with PostgreSQL's own message). Messages name the server as
 * host:port/database, never the URL's password.
 */
import { SvcError } from "../../errors.js";

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
]);

/** host:port/database of a postgres URL (never its user's password). */
export function describeStore(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"}${u.pathname || "/"}`;
  } catch {
    return "the configured PostgreSQL server";
  }
}

export function storeError(err: unknown, url: string): SvcError {
  if (SvcError.is(err)) return err;
  const e = err as { code?: string; message?: string };
  const code = e.code ?? "";
  const where = describeStore(url);
  const message = e.message ?? String(err);
  if (
    UNREACHABLE_CODES.has(code) ||
    code.startsWith("08") ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03" ||
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
      message,
    )
  )
    return new SvcError(
      "store_unreachable",
      `the team store at ${where} cannot be reached (${message}); accepted events are kept, try again`,
      {
        cause: err,
      },
    );
  if (code === "28P01" || code === "28000")
    return new SvcError("store_auth_failed", `the team store at ${where} refused the login: ${message}`, {
      cause: err,
    });
  if (code === "3D000")
    return new SvcError("store_unreachable", `the team store at ${where} has no such database: ${message}`, {
      cause: err,
    });
  return new SvcError("internal", `team store statement failed: ${message}`, { cause: err });
}
