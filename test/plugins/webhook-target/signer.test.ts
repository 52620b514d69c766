import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signatureHeader, signWithKey } from "../../../plugins/webhook-target/signer.js";
import { decodeSecret } from "../../../plugins/webhook-target/secret.js";

// Published test vectors of the Standard Webhooks reference libraries
// (libraries/javascript/src/webhook.test.ts, libraries/python/tests/test_webhooks.py, libraries/go/webhook_test.go).
const KEY = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const PAYLOAD = '{"test": 2432232314}';
const TIMESTAMP = 1614265330;
const EXPECTED = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

const nowSec = () => Math.floor(Date.now() / 1000);
/** Signs with the decoded key of a `whsec_` secret, as the dispatcher and the challenge do. */
const sign = (secret: string, msgId: string, timestamp: number, body: Buffer | string) =>
  signWithKey(decodeSecret(secret)!, msgId, timestamp, body);

describe("Standard Webhooks signer", () => {
  it("reproduces the reference sign vector byte for byte (string and Buffer bodies)", () => {
    expect(sign(KEY, MSG_ID, TIMESTAMP, PAYLOAD)).toBe(EXPECTED);
    expect(sign(KEY, MSG_ID, TIMESTAMP, Buffer.from(PAYLOAD))).toBe(EXPECTED);
    expect(new Webhook(KEY).sign(MSG_ID, new Date(TIMESTAMP * 1000), PAYLOAD)).toBe(EXPECTED);
  });

  it("is verified by the standardwebhooks package, also among foreign and v2 values (reference multi-sig vector)", () => {
    const ts = nowSec();
    const header = sign(KEY, MSG_ID, ts, PAYLOAD);
    const headers = (sig: string) => ({
      "webhook-id": MSG_ID,
      "webhook-timestamp": String(ts),
      "webhook-signature": sig,
    });
    expect(new Webhook(KEY).verify(PAYLOAD, headers(header))).toEqual({ test: 2432232314 });
    const multi = [
      "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
      "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
      header,
      "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
    ].join(" ");
    expect(new Webhook(KEY).verify(PAYLOAD, headers(multi))).toEqual({ test: 2432232314 });
    expect(() => new Webhook(KEY).verify(PAYLOAD + " ", headers(header))).toThrow();
  });

  it("dual-signs with two keys, space-separated, each verifying on its own", () => {
    const a = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
    const b = `whsec_${Buffer.alloc(48, 2).toString("base64")}`;
    const ts = nowSec();
    const body = Buffer.from('{"id":"evt_1","data":{"x":"é"}}');
    const header = signatureHeader([decodeSecret(a)!, decodeSecret(b)!], "evt_1", ts, body);
    expect(header.split(" ")).toHaveLength(2);
    expect(header.split(" ").every((v) => v.startsWith("v1,"))).toBe(true);
    for (const secret of [a, b]) {
      expect(
        new Webhook(secret).verify(body.toString(), {
          "webhook-id": "evt_1",
          "webhook-timestamp": String(ts),
          "webhook-signature": header,
        }),
      ).toBeTruthy();
    }
  });
});
