/** Issue 13: a receiver whose certificate Node does not trust is named as such, with the fix (NODE_EXTRA_CA_CERTS). */
import { describe, expect, it } from "vitest";
import { mapEgressError } from "../../../core/egress/egress-errors.js";

const failed = (code: string) =>
  Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("tls"), { code }) });

describe("mapEgressError", () => {
  it.each(["DEPTH_ZERO_SELF_SIGNED_CERT", "SELF_SIGNED_CERT_IN_CHAIN", "UNABLE_TO_VERIFY_LEAF_SIGNATURE"])(
    "%s: says how to trust the receiver",
    (code) => {
      const e = mapEgressError(failed(code), "localhost:8443");
      expect(e.code).toBe("connect");
      expect(e.message).toMatch(
        new RegExp(
          `could not complete the request to localhost:8443 \\(${code}\\); Node does not trust its certificate: .*NODE_EXTRA_CA_CERTS=`,
        ),
      );
    },
  );

  it("other failures keep the short form", () => {
    expect(mapEgressError(failed("ECONNREFUSED"), "h:1").message).toBe(
      "could not complete the request to h:1 (ECONNREFUSED)",
    );
    expect(mapEgressError(failed("UND_ERR_CONNECT_TIMEOUT"), "h:1")).toMatchObject({ code: "timeout" });
  });
});
