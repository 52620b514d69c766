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
      expect(e.code).toBe("tls_untrusted");
      expect(e.message).toMatch(
        new RegExp(
          `could not complete the request to localhost:8443 \\(${code}\\); Node does not trust its certificate: .*NODE_EXTRA_CA_CERTS=`,
        ),
      );
    },
  );

  it("an expired certificate and one for another name are tls_untrusted too, each with its fix", () => {
    expect(mapEgressError(failed("CERT_HAS_EXPIRED"), "h:1")).toMatchObject({
      code: "tls_untrusted",
      message: expect.stringMatching(/\(CERT_HAS_EXPIRED\); its certificate is outside its validity period .*renew it/),
    });
    expect(mapEgressError(failed("ERR_TLS_CERT_ALTNAME_INVALID"), "h:1")).toMatchObject({
      code: "tls_untrusted",
      message: expect.stringMatching(/does not name this host: use a URL whose host the certificate names/),
    });
  });

  it("a TLS protocol error is no certificate verdict: it stays connect", () => {
    expect(mapEgressError(failed("EPROTO"), "h:1")).toMatchObject({ code: "connect" });
  });

  it("other failures keep the short form", () => {
    expect(mapEgressError(failed("ECONNREFUSED"), "h:1").message).toBe(
      "could not complete the request to h:1 (ECONNREFUSED)",
    );
    expect(mapEgressError(failed("UND_ERR_CONNECT_TIMEOUT"), "h:1")).toMatchObject({ code: "timeout" });
  });
});
