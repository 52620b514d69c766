/**
 * How the CLI talks to the running daemon: finds it through runtime.json, sends the per-boot
 * token, and turns the daemon's `{error: {code, message}}` bodies back into SvcErrors.
 */
import { SvcError } from "../errors.js";
import { baseUrlOf, liveRuntimeInfo, type RuntimeInfo } from "../daemon/runtime-info.js";
import { svcHome } from "../storage/paths.js";
import { httpRequest, type HttpAnswer } from "./daemon-http.js";

/** `svc --remote <pairing> <verb…>`: the verb's requests go through that pairing's encrypted link. */
let remotePairing: string | undefined;
export function useRemotePairing(pairing: string | undefined): void {
  remotePairing = pairing;
}

export class DaemonClient {
  private constructor(
    readonly info: RuntimeInfo,
    readonly baseUrl: string,
  ) {}

  static async connect(home = svcHome()): Promise<DaemonClient> {
    const info = await liveRuntimeInfo(home);
    if (!info) {
      throw new SvcError("daemon_not_running", `no svc daemon is running for ${home}; start one with \`svc serve\``);
    }
    return new DaemonClient(info, baseUrlOf(info));
  }

  /** `init.headers`: extra request headers (e.g. `idempotency-key`), sent through `--remote` too. */
  async request<T = unknown>(method: string, path: string, body?: unknown, init: DaemonRequestInit = {}): Promise<T> {
    if (remotePairing !== undefined) return this.viaPairing<T>(remotePairing, method, path, body, init);
    return this.direct<T>(method, path, body, init);
  }

  /** Sends the request to the paired daemon through the local daemon's link; its errors come back as they are. */
  private async viaPairing<T>(
    pairing: string,
    method: string,
    path: string,
    body: unknown,
    init: DaemonRequestInit,
  ): Promise<T> {
    const r = await this.direct<{ status: number; body: string }>(
      "POST",
      `/pairings/${encodeURIComponent(pairing)}/request`,
      {
        method,
        path,
        timeoutMs: init.timeoutMs ?? 60_000,
        headers: {
          ...init.headers,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          // The far daemon's own token, for what it asks a token of (never this daemon's per-boot token).
          ...(process.env.SVC_REMOTE_AUTH_TOKEN
            ? { authorization: `Bearer ${process.env.SVC_REMOTE_AUTH_TOKEN}` }
            : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      },
      // The link may take a moment to connect before the far daemon's own wait begins.
      { timeoutMs: (init.timeoutMs ?? 60_000) + 20_000 },
    );
    const parsed = r.body ? safeJson(r.body) : undefined;
    if (r.status >= 400) {
      const e = (parsed as { error?: { code?: string; message?: string; details?: unknown } })?.error;
      throw new SvcError(
        (e?.code as never) ?? "internal",
        `${e?.message ?? `the paired daemon answered ${r.status}`} (paired daemon ${pairing})`,
        { details: e?.details as never },
      );
    }
    return parsed as T;
  }

  /**
   * Opens a streaming GET (e.g. `/events`) on this daemon and returns its response once the
   * headers arrived; `undefined` through `--remote` (a pairing carries requests, not streams).
   */
  async openStream(path: string, signal: AbortSignal): Promise<Response | undefined> {
    if (remotePairing !== undefined) return undefined;
    const res = await fetch(this.baseUrl + path, { headers: this.headers(), signal });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => undefined);
      return undefined;
    }
    return res;
  }

  /**
   * Opens a streaming GET (e.g. `/sessions/:id/events?follow=1`) and returns its response once the
   * headers arrived; the daemon's refusal is thrown as {@link request} throws it (`not_found`, …).
   * Through `--remote` it is refused: a pairing carries requests, not streams.
   */
  async stream(path: string, signal: AbortSignal): Promise<Response & { body: ReadableStream<Uint8Array> }> {
    if (remotePairing !== undefined)
      throw new SvcError("usage", `${path.split("?")[0]} streams, and --remote carries requests, not streams`);
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, { headers: this.headers(), signal });
    } catch (err) {
      throw this.unanswered(err);
    }
    if (res.ok && res.body) return res as Response & { body: ReadableStream<Uint8Array> };
    const text = await res.text().catch(() => "");
    throw answerError(res.status, text ? safeJson(text) : undefined);
  }

  private unanswered(err: unknown): SvcError {
    return new SvcError(
      "daemon_not_running",
      `the svc daemon (pid ${this.info.pid}) at ${this.baseUrl} did not answer: ${(err as Error).message}`,
    );
  }

  private headers(json = false): Record<string, string> {
    return {
      authorization: `Bearer ${this.info.token}`,
      // Inside a session: its token, from which the daemon derives the calling session (spawn lineage).
      ...(process.env.SVC_SESSION_TOKEN ? { "x-svc-session-token": process.env.SVC_SESSION_TOKEN } : {}),
      ...(json ? { "content-type": "application/json" } : {}),
    };
  }

  private async direct<T>(method: string, path: string, body?: unknown, init: DaemonRequestInit = {}): Promise<T> {
    let res: HttpAnswer;
    try {
      res = await httpRequest(this.baseUrl + path, {
        method,
        headers: { ...init.headers, ...this.headers(body !== undefined) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        timeoutMs: init.timeoutMs ?? 60_000,
      });
    } catch (err) {
      throw this.unanswered(err);
    }
    const parsed = res.text ? safeJson(res.text) : undefined;
    if (res.status < 200 || res.status >= 300) throw answerError(res.status, parsed);
    return parsed as T;
  }
}

/** The daemon's `{error: {code, message, details}}` answer as the SvcError it was. */
function answerError(status: number, parsed: unknown): SvcError {
  const e = (parsed as { error?: { code?: string; message?: string; details?: unknown } })?.error;
  return new SvcError((e?.code as never) ?? "internal", e?.message ?? `daemon answered ${status}`, {
    details: e?.details as never,
  });
}

interface DaemonRequestInit {
  timeoutMs?: number;
  headers?: Record<string, string>;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
