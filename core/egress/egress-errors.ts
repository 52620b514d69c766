/** Maps what undici, Node's TLS and the gate throw to the gate's failure reasons. */
import { SvcError } from "../errors.js";

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT", "ABORT_ERR"]);

/** An SvcError whose message names only the host and a short error code. */
export function mapEgressError(err: unknown, host: string): SvcError {
  if (SvcError.is(err)) return err;
  const code = errorCode(err);
  if (TIMEOUT_CODES.has(code)) return new SvcError("timeout", `${host} did not answer in time (${code})`, { cause: err });
  return new SvcError("connect", `could not complete the request to ${host} (${code})`, { cause: err });
}

function errorCode(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e !== null && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") return code;
    e = (e as { cause?: unknown }).cause;
  }
  return err instanceof Error ? err.name : "unknown error";
}
