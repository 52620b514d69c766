/**
 * Parsing a request body as JSON. A body that is not JSON is an `invalid_input` error that says
 * what is wrong and at which character, never quoting the body: V8's own message quotes the
 * input around the fault, and a body is often a secret (`{"secret": whsec_…}`).
 */
import { SvcError } from "../errors.js";
import { jsonFault } from "../runtime/json-fault.js";
import { JSON_DEPTH_MAX, jsonDepthExceeded } from "../plugin-api/limits.js";

export function parseJsonBody<T>(body: Buffer): T {
  if (body.length === 0) throw new SvcError("invalid_input", "the request body is empty; a JSON body is required");
  const text = body.toString("utf8");
  const at = jsonDepthExceeded(text);
  if (at !== undefined) {
    throw new SvcError(
      "invalid_input",
      `the request body nests objects and arrays deeper than ${JSON_DEPTH_MAX} levels (at character ${at}); flatten it`,
    );
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new SvcError("invalid_input", `the request body is not valid JSON: ${jsonFault(text)}`);
  }
}
