import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRandom, FakeClock } from "../../../core/runtime/clock.js";
import { CHALLENGE_CACHE_TTL_MS } from "../../../plugins/webhook-target/challenge-cache.js";
import { createChallengeVerifier, type ChallengeVerifier } from "../../../plugins/webhook-target/challenge.js";
import { signWithKey } from "../../../plugins/webhook-target/signer.js";
import {
  failure,
  startGate,
  tableResolver,
  startReceiver,
  withEgress,
  type Receiver,
} from "../../support/https-receiver.js";
import type { Egress } from "../../../core/plugin-api/index.js";

const SECRET = "whsec_" + Buffer.alloc(32, 7).toString("base64");
const OTHER_SECRET = "whsec_" + Buffer.alloc(32, 9).toString("base64");
const resolver = tableResolver({ "receiver.test": ["127.0.0.1"] });

let rx: Receiver;
let egress: Egress;
let closeGate: () => Promise<void>;
let clock: FakeClock;
let verifier: ChallengeVerifier;

function echo(transform: (challenge: string) => unknown = (challenge) => ({ challenge }), status = 200) {
  rx.handle((req, res) => {
    const { challenge } = JSON.parse(req.body.toString());
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(transform(challenge)));
  });
}

beforeAll(async () => {
  ({ rx, egress, close: closeGate } = await startGate({ resolver }));
});
afterAll(() => closeGate());
beforeEach(() => {
  rx.seen.length = 0;
  clock = new FakeClock(Date.now());
  // Long enough that an answered request never times out on a busy machine; the one test about
  // the timeout makes its own verifier with a short one.
  verifier = createChallengeVerifier({
    egress,
    clock,
    random: createRandom(clock),
    sign: signWithKey,
    timeoutMs: 60_000,
  });
  echo();
});

const url = (path = "/hook") => `https://receiver.test:${rx.port}${path}`;
const input = (over: Partial<{ url: string; secret: string; subscriptionId: string; principal: string }> = {}) => ({
  url: url(),
  secret: SECRET,
  subscriptionId: "snt_01TEST",
  principal: "local",
  ...over,
});

describe("challenge request", () => {
  it("sends a signed verification POST that the standardwebhooks package verifies", async () => {
    await verifier.verify(input());
    expect(rx.seen).toHaveLength(1);
    const req = rx.seen[0]!;
    const body = JSON.parse(req.body.toString());
    expect(Object.keys(body).sort()).toEqual(["challenge", "type"]);
    expect(body.type).toBe("verification");
    expect(body.challenge).toMatch(/^[0-9a-f]{64}$/);
    expect(req.headers["webhook-id"]).toMatch(/^msg_verification_[0-9A-Za-z]+$/);
    expect(req.headers["webhook-timestamp"]).toBe(String(Math.floor(clock.now() / 1000)));
    expect(req.headers["x-mcp-subscription-id"]).toBe("snt_01TEST");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(req.headers.host).toBe(`receiver.test:${rx.port}`);
    const headers = Object.fromEntries(
      ["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(req.headers[h])]),
    );
    expect(new Webhook(SECRET).verify(req.body.toString(), headers)).toEqual(body);
    expect(() => new Webhook(OTHER_SECRET).verify(req.body.toString(), headers)).toThrow();
  });

  it("uses a fresh challenge and message id on every verification", async () => {
    await verifier.verify(input());
    await verifier.verify(input({ secret: OTHER_SECRET }));
    const [a, b] = rx.seen.map((s) => ({
      id: s.headers["webhook-id"],
      challenge: JSON.parse(s.body.toString()).challenge,
    }));
    expect(a!.id).not.toBe(b!.id);
    expect(a!.challenge).not.toBe(b!.challenge);
  });
});

describe("challenge failures map to exactly SPEC.md's reasons", () => {
  const cases: Array<[string, () => void, string]> = [
    ["a wrong echo", () => echo(() => ({ challenge: "0".repeat(64) })), "challenge_failed"],
    ["a shorter echo", () => echo((c) => ({ challenge: c.slice(1) })), "challenge_failed"],
    ["an echo of another type", () => echo((c) => ({ challenge: [c] })), "challenge_failed"],
    ["a JSON array", () => echo((c) => [c]), "challenge_failed"],
    ["no challenge field", () => echo(() => ({ ok: true })), "challenge_failed"],
    ["a non-JSON body", () => rx.handle((_q, res) => res.writeHead(200).end("hello")), "challenge_failed"],
    [
      "a 2 MB body",
      () => rx.handle((_q, res) => res.writeHead(200).end(Buffer.alloc(2 * 1024 * 1024, 0x20))),
      "challenge_failed",
    ],
    ["a 500", () => echo(undefined, 500), "non_2xx"],
    ["a 404", () => echo(undefined, 404), "non_2xx"],
    [
      "a 301 to http",
      () => rx.handle((_q, res) => res.writeHead(301, { location: "http://receiver.test/" }).end()),
      "ssrf_blocked",
    ],
    [
      "a 302 to https",
      () => rx.handle((_q, res) => res.writeHead(302, { location: "https://receiver.test/" }).end()),
      "ssrf_blocked",
    ],
    ["no answer in time", () => rx.handle(() => undefined), "timeout"],
    ["a reset", () => rx.handle((_q, res) => res.socket?.destroy()), "timeout"],
  ];
  it.each(cases)("%s → %s", async (name, setup, code) => {
    setup();
    const v =
      name === "no answer in time"
        ? createChallengeVerifier({ egress, clock, random: createRandom(clock), sign: signWithKey, timeoutMs: 1_000 })
        : verifier;
    const err = await failure(v.verify(input({ url: url("/hook/path-part?q=query-part") })));
    expect(err.code).toBe(code);
    expect(err.message).toContain(`receiver.test:${rx.port}`);
    expect(err.message).not.toMatch(/path-part|query-part|whsec_/);
    expect(err.message).not.toContain(SECRET.slice(6));
    expect(rx.seen).toHaveLength(1);
  });

  it("a non-https URL → non_https, nothing sent", async () => {
    for (const u of [`http://receiver.test:${rx.port}/`, "wss://receiver.test/", "nonsense"]) {
      expect((await failure(verifier.verify(input({ url: u })))).code).toBe("non_https");
    }
    expect(rx.seen).toHaveLength(0);
  });

  it("a private target → ssrf_blocked, nothing sent", async () => {
    await withEgress({ resolver }, async (strict) => {
      const v = createChallengeVerifier({ egress: strict, clock, random: createRandom(clock), sign: signWithKey });
      expect((await failure(v.verify(input()))).code).toBe("ssrf_blocked");
    });
    expect(rx.seen).toHaveLength(0);
  });

  it("a refused connection → timeout", async () => {
    const gone = await startReceiver();
    await gone.close();
    expect((await failure(verifier.verify(input({ url: `https://receiver.test:${gone.port}/` })))).code).toBe(
      "timeout",
    );
  });

  it.each([
    ["no prefix", Buffer.alloc(32, 1).toString("base64")],
    ["too short", "whsec_" + Buffer.alloc(16, 1).toString("base64")],
    ["url-safe alphabet", "whsec_" + Buffer.alloc(32, 0xfb).toString("base64url")],
    ["not base64", "whsec_not base64 at all!!"],
  ])("a malformed secret (%s) → challenge_failed, never echoed, nothing sent", async (_n, secret) => {
    const err = await failure(verifier.verify(input({ secret })));
    expect(err.code).toBe("challenge_failed");
    expect(err.message).not.toContain(secret);
    expect(rx.seen).toHaveLength(0);
  });

  it("a failure is not cached", async () => {
    echo(undefined, 500);
    await failure(verifier.verify(input()));
    echo();
    await verifier.verify(input());
    expect(rx.seen).toHaveLength(2);
  });
});

describe("challenge verification cache (fake clock)", () => {
  it("a success is cached for 10 minutes per (principal, normalized URL, secret)", async () => {
    await verifier.verify(input());
    await verifier.verify(input({ url: `HTTPS://RECEIVER.test:${rx.port}/hook` }));
    expect(rx.seen).toHaveLength(1);
    clock.advance(CHALLENGE_CACHE_TTL_MS - 1);
    await verifier.verify(input());
    expect(rx.seen).toHaveLength(1);
    clock.advance(1);
    await verifier.verify(input());
    expect(rx.seen).toHaveLength(2);
  });

  it("a new secret, another principal or another path misses the cache", async () => {
    await verifier.verify(input());
    await verifier.verify(input({ secret: OTHER_SECRET }));
    await verifier.verify(input({ principal: "someone-else" }));
    await verifier.verify(input({ url: url("/other") }));
    expect(rx.seen).toHaveLength(4);
    await verifier.verify(input({ secret: OTHER_SECRET }));
    expect(rx.seen).toHaveLength(4);
  });

  it("a changed secret re-verifies and fails when the callback does not echo it", async () => {
    await verifier.verify(input());
    echo(() => ({ challenge: "nope" }));
    expect((await failure(verifier.verify(input({ secret: OTHER_SECRET })))).code).toBe("challenge_failed");
    await verifier.verify(input());
    expect(rx.seen).toHaveLength(2);
  });
});
