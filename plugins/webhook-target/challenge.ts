/**
 * Challenge verification of a webhook callback (before activation and on rotation): a signed
 * `{type: "verification", challenge}` POST through the host's egress (the SSRF gate); the callback must
 * answer 2xx with JSON `{challenge}` equal to ours (compared in constant time).
 */
import { timingSafeEqual } from "node:crypto";
import {
  SvcError,
  parseHttpsUrl,
  type Clock,
  type Egress,
  type Logger,
  type Random,
} from "../../core/plugin-api/index.js";
import { challengeCacheKey, createChallengeCache, type ChallengeCache } from "./challenge-cache.js";
import { categoryOfError, type DeliveryFailure } from "./failure-category.js";
import { decodeSecret, parseSecret } from "./secret.js";

/** The verification POST's timeout. */
export const CHALLENGE_TIMEOUT_MS = 10_000;

/** The codes of a failed verification's SvcError. */
export const CHALLENGE_FAILURES = [
  "challenge_failed",
  "timeout",
  "non_https",
  "ssrf_blocked",
  "non_2xx",
  "tls_untrusted",
] as const;
export type ChallengeFailure = (typeof CHALLENGE_FAILURES)[number];

/** How a verification succeeded: `cached` when a success younger than the cache's TTL answered and nothing was sent. */
export interface ChallengeOutcome {
  cached: boolean;
}

export interface ChallengeVerifier {
  /**
   * Resolves when the callback echoed the challenge (or a success is cached); throws
   * SvcError(code = ChallengeFailure). Once the POST was tried, the error's `details.reason` is
   * the failure's category ({@link challengeReason}).
   * `alsoSignWith` (a rotation: the current secret) adds a second signature, as deliveries carry
   * during a rotation window, so a receiver that knows only its current secret can verify the
   * challenge for a secret it has not been told yet. `fresh` sends the challenge even when a
   * success is cached (a health check of a suspended callback).
   */
  verify(input: {
    url: string;
    secret: string;
    subscriptionId: string;
    principal: string;
    alsoSignWith?: string;
    fresh?: boolean;
  }): Promise<ChallengeOutcome>;
}

/**
 * The category of a failed verification (the MCP sketch's `CallbackEndpointError` reasons): an
 * endpoint that answered without echoing the challenge (a wrong echo, a non-2xx, a redirect) is
 * `challenge_failed`; one that could not be reached is `connection_refused`, `timeout` or
 * `tls_error`. Any other error (a malformed secret or URL, refused before sending) is `undefined`.
 */
export function challengeReason(err: unknown): DeliveryFailure | undefined {
  const details = SvcError.is(err) ? err.details : undefined;
  return details && !Array.isArray(details) ? (details.reason as DeliveryFailure | undefined) : undefined;
}

const answered = { details: { reason: "challenge_failed" satisfies DeliveryFailure } };

export interface ChallengeDeps {
  egress: Pick<Egress, "post">;
  clock: Clock;
  random: Random;
  /** Returns the `webhook-signature` header value for a decoded key (the signer's `signWithKey`, the only signing code). */
  sign: (key: Buffer, msgId: string, timestamp: number, body: string) => string;
  /** Defaults to a 10-minute cache on `clock`. */
  cache?: ChallengeCache;
  /** Defaults to {@link CHALLENGE_TIMEOUT_MS}. */
  timeoutMs?: number;
  logger?: Logger;
}

const EGRESS_TO_CHALLENGE: Record<string, ChallengeFailure> = {
  non_https: "non_https",
  private_target: "ssrf_blocked",
  redirect: "ssrf_blocked",
  timeout: "timeout",
  connect: "timeout",
  tls_untrusted: "tls_untrusted",
};

export function createChallengeVerifier(deps: ChallengeDeps): ChallengeVerifier {
  const cache = deps.cache ?? createChallengeCache(deps.clock);
  const timeoutMs = deps.timeoutMs ?? CHALLENGE_TIMEOUT_MS;

  return {
    async verify({ url, secret, subscriptionId, principal, alsoSignWith, fresh }) {
      const target = parseHttpsUrl(url);
      const host = target.host;
      const hmacKey = parseSecret(secret);
      const key = challengeCacheKey(principal, target, secret);
      if (!fresh && cache.has(key)) return { cached: true };

      const challenge = deps.random.hex(32);
      const msgId = `msg_verification_${deps.random.ulid()}`;
      const timestamp = Math.floor(deps.clock.now() / 1000);
      const body = JSON.stringify({ type: "verification", challenge });
      const also = alsoSignWith === undefined ? undefined : decodeSecret(alsoSignWith);
      const signature = [hmacKey, ...(also && !also.equals(hmacKey) ? [also] : [])]
        .map((k) => deps.sign(k, msgId, timestamp, body))
        .join(" ");
      const headers = {
        "content-type": "application/json",
        "webhook-id": msgId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signature,
        "x-mcp-subscription-id": subscriptionId,
      };

      let res;
      try {
        res = await deps.egress.post(target.href, { headers, body, timeoutMs });
      } catch (err) {
        const reason = SvcError.is(err) ? EGRESS_TO_CHALLENGE[err.code] : undefined;
        if (!reason || !SvcError.is(err)) throw err;
        throw new SvcError(reason, `challenge verification of ${host} failed: ${err.message}`, {
          cause: err,
          // A redirect is an answer, like a wrong echo; the rest never reached an answer.
          details: { reason: err.code === "redirect" ? "challenge_failed" : categoryOfError(err) },
        });
      }
      if (res.status >= 300 && res.status < 400 && res.headers.location !== undefined) {
        throw new SvcError(
          "ssrf_blocked",
          `challenge verification of ${host} failed: it answered ${res.status} (a redirect); redirects are never followed`,
          answered,
        );
      }
      if (res.status < 200 || res.status > 299) {
        throw new SvcError(
          "non_2xx",
          `challenge verification of ${host} failed: it answered ${res.status}; a 2xx with {"challenge": ...} is required`,
          answered,
        );
      }
      if (!echoes(res.body, challenge)) {
        throw new SvcError(
          "challenge_failed",
          `challenge verification of ${host} failed: the response is not JSON {"challenge": <the challenge sent>}`,
          answered,
        );
      }
      cache.remember(key);
      deps.logger?.info("webhook callback verified", { host, subscriptionId });
      return { cached: false };
    },
  };
}

function echoes(body: Buffer, challenge: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return false;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
  const echoed = (parsed as { challenge?: unknown }).challenge;
  if (typeof echoed !== "string") return false;
  const a = Buffer.from(echoed, "utf8");
  const b = Buffer.from(challenge, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
