/**
 * One judge request over HTTP(S): the URL comes from config (`extJudge.baseUrl`, a reach-widening
 * key, or the llm-endpoint sidecar on loopback), so no SSRF gate, but redirects are not followed.
 * The whole exchange, answer included, has `timeoutMs`; the answer is read to {@link MAX_ANSWER_BYTES}.
 * Resolves with the answer's text or a short reason; never rejects, never carries the key or the
 * body of an error answer (it may echo what was sent).
 */

/** A verdict is a few hundred bytes: an answer over this is refused as oversized. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export type JudgeHttpResult = { ok: true; text: string } | { ok: false; reason: string };

export interface JudgeHttpRequest {
  url: string;
  bearer: string;
  body: unknown;
  timeoutMs: number;
  /** The answering side is svc's own sidecar: the message of its error answers may be shown. */
  ownErrors?: boolean;
  /** Aborts the request (the daemon stops). */
  signal?: AbortSignal;
}

async function readCapped(res: Response, cap: number): Promise<{ ok: true; text: string } | { ok: false }> {
  if (!res.body) return { ok: true, text: "" };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel().catch(() => undefined);
      return { ok: false };
    }
    chunks.push(value);
  }
  return { ok: true, text: Buffer.concat(chunks).toString("utf8") };
}

function ownErrorMessage(text: string): string | undefined {
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof m === "string" ? m.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}

function failure(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `the judge did not answer within ${timeoutMs / 1000}s (extJudge.timeoutSec)`;
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? cause.code : (err as { code?: unknown }).code;
  return `the judge could not be reached${typeof code === "string" ? ` (${code})` : ""}`;
}

export async function postJudge(r: JudgeHttpRequest): Promise<JudgeHttpResult> {
  const timeout = AbortSignal.timeout(r.timeoutMs);
  const signal = r.signal ? AbortSignal.any([timeout, r.signal]) : timeout;
  try {
    const res = await fetch(r.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${r.bearer}` },
      body: JSON.stringify(r.body),
      redirect: "manual",
      signal,
    });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      return {
        ok: false,
        reason: `the judge answered a redirect (HTTP ${res.status}); svc does not follow redirects: set extJudge.baseUrl to the final URL`,
      };
    }
    const read = await readCapped(res, MAX_ANSWER_BYTES);
    if (!read.ok) return { ok: false, reason: `the judge's answer is over ${MAX_ANSWER_BYTES} bytes` };
    if (res.status < 200 || res.status >= 300) {
      const own = r.ownErrors ? ownErrorMessage(read.text) : undefined;
      return { ok: false, reason: `the judge answered HTTP ${res.status}${own ? `: ${own}` : ""}` };
    }
    return { ok: true, text: read.text };
  } catch (err) {
    if (r.signal?.aborted) return { ok: false, reason: "the daemon stopped before the judge answered" };
    return { ok: false, reason: failure(err, timeout, r.timeoutMs) };
  }
}
