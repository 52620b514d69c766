/** Maps what undici, Node's TLS and the gate throw to the gate's failure reasons. */
import { SvcError } from "../errors.js";

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
  "ABORT_ERR",
]);

/** An SvcError whose message names only the host and a short error code. */
export function mapEgressError(err: unknown, host: string): SvcError {
  if (SvcError.is(err)) return err;
  const code = errorCode(err);
  if (TIMEOUT_CODES.has(code))
    return new SvcError("timeout", `${host} did not answer in time (${code})`, { cause: err });
  const why = certificateProblem(code);
  if (why)
    return new SvcError("tls_untrusted", `could not complete the request to ${host} (${code}); ${why}`, {
      cause: err,
    });
  return new SvcError("connect", `could not complete the request to ${host} (${code})`, { cause: err });
}

/** Node's codes for a certificate chain it does not trust (a self-signed receiver, a private CA). */
const UNTRUSTED_CHAIN_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "INVALID_CA",
]);
const EXPIRED_CODES = new Set(["CERT_HAS_EXPIRED", "CERT_NOT_YET_VALID"]);

/**
 * `tls_untrusted`: the receiver's certificate was not accepted (an untrusted chain, an expired
 * certificate, or one issued for another name): what is wrong and what fixes it; `undefined`
 * for any other failure (a refused connection, a TLS protocol error stay `connect`).
 */
function certificateProblem(code: string): string | undefined {
  if (UNTRUSTED_CHAIN_CODES.has(code))
    return "Node does not trust its certificate: for a self-signed or private-CA receiver, start the daemon with NODE_EXTRA_CA_CERTS=<its certificate or CA, PEM>";
  if (EXPIRED_CODES.has(code))
    return "its certificate is outside its validity period (expired or not yet valid): renew it on the receiver";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return "its certificate does not name this host: use a URL whose host the certificate names, or reissue the certificate for this one";
  return undefined;
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
