/**
 * The failure categories of deliveryStatus.lastError and of a failed challenge's reason, from real
 * failures through the real egress: a closed port, a certificate for another name, an endpoint that
 * never answers, HTTP answers.
 */
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEgress, type Egress } from "../../../core/egress/egress.js";
import { FakeClock, createRandom } from "../../../core/runtime/clock.js";
import { challengeReason, createChallengeVerifier } from "../../../plugins/webhook-target/challenge.js";
import { categoryOfError, categoryOfStatus } from "../../../plugins/webhook-target/failure-category.js";
import { signWithKey } from "../../../plugins/webhook-target/signer.js";
import { tableResolver } from "../../support/https-receiver.js";
import { LOOPBACK_ALLOWED, secretOf, startReceiver, type Receiver } from "./support/harness.js";

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe("failure categories (real egress, real HTTPS receiver)", () => {
  let rx: Receiver;
  let egress: Egress;
  beforeAll(async () => {
    rx = await startReceiver();
    egress = createEgress({
      allowSubnets: LOOPBACK_ALLOWED,
      resolver: tableResolver({ "wrong-name.example": ["127.0.0.1"] }),
    });
  });
  afterAll(async () => {
    await egress.close();
    await rx.close();
  });
  const failureOf = async (url: string, timeoutMs = 60_000) => {
    try {
      await egress.post(url, { headers: {}, body: "{}", timeoutMs });
    } catch (err) {
      return err;
    }
    throw new Error("expected a failure");
  };

  it("classifies a refused connection, a certificate for another name, a silent endpoint and the SSRF gate", async () => {
    expect(categoryOfError(await failureOf(`https://127.0.0.1:${await closedPort()}/h`))).toBe("connection_refused");
    expect(categoryOfError(await failureOf(`https://wrong-name.example:${rx.port}/h`))).toBe("tls_error");
    rx.handle(() => undefined);
    expect(categoryOfError(await failureOf(`https://127.0.0.1:${rx.port}/h`, 300))).toBe("timeout");
    const gated = createEgress({ allowSubnets: [] });
    try {
      expect(
        categoryOfError(
          await gated
            .post(`https://127.0.0.1:${rx.port}/h`, { headers: {}, body: "{}", timeoutMs: 60_000 })
            .catch((e) => e),
        ),
      ).toBe("connection_refused");
    } finally {
      await gated.close();
    }
  });

  it("classifies HTTP answers: 5xx is http_5xx, 4xx and 3xx http_4xx", () => {
    expect([500, 503, 404, 410, 301].map(categoryOfStatus)).toEqual([
      "http_5xx",
      "http_5xx",
      "http_4xx",
      "http_4xx",
      "http_4xx",
    ]);
  });

  it("gives a failed challenge its reason: challenge_failed when the endpoint answered, the connection category when not", async () => {
    const clock = new FakeClock(Date.now());
    // A long timeout where an answer or a refusal is expected (a loaded machine must not turn it into a timeout).
    const verifier = (timeoutMs: number) =>
      createChallengeVerifier({ egress, clock, random: createRandom(clock), sign: signWithKey, timeoutMs });
    const reasonOf = (url: string, timeoutMs = 60_000) =>
      verifier(timeoutMs)
        .verify({ url, secret: secretOf(1), subscriptionId: "sub_00000000", principal: "p" })
        .then(() => "verified", challengeReason);
    rx.handle((_r, res) => res.writeHead(500).end("internal detail"));
    expect(await reasonOf(`https://127.0.0.1:${rx.port}/a`)).toBe("challenge_failed");
    rx.handle((_r, res) => res.writeHead(200).end('{"challenge":"wrong"}'));
    expect(await reasonOf(`https://127.0.0.1:${rx.port}/b`)).toBe("challenge_failed");
    expect(await reasonOf(`https://127.0.0.1:${await closedPort()}/c`)).toBe("connection_refused");
    expect(await reasonOf(`https://wrong-name.example:${rx.port}/d`)).toBe("tls_error");
    rx.handle(() => undefined);
    expect(await reasonOf(`https://127.0.0.1:${rx.port}/e`, 300)).toBe("timeout");
  });
});
