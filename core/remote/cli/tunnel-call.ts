/**
 * `svc tunnel call <public-url> <path>`: one request through a tunnel, plain or sealed to the
 * daemon's key, presenting the tunnel's caller token (SVC_TUNNEL_TOKEN) at the relay. Secrets
 * come from the environment, never from the command line (which other users of the machine can
 * read).
 */
import { SvcError } from "../../errors.js";
import { println, usageError } from "../../cli/output.js";
import { fromB64u } from "../web/bytes.js";
import { E2E_CONTENT_TYPE, sealRequest } from "../web/tunnel-e2e.js";

interface CallOptions {
  method?: string;
  data?: string;
  key?: string;
}

export async function tunnelCall(url: string, path: string, o: CallOptions): Promise<void> {
  if (!/^https?:\/\/[^\s/?#]+\/t\/[0-9a-f]{16}\/?$/.test(url))
    throw usageError(
      `the public URL must be the one \`svc serve\` printed, like https://relay.example/t/0123456789abcdef/ (got ${JSON.stringify(url)})`,
    );
  if (!path.startsWith("/")) throw usageError(`the path must start with / (got ${JSON.stringify(path)})`);
  const method = (o.method ?? "GET").toUpperCase();
  if (!/^(GET|POST|PUT|PATCH|DELETE)$/.test(method))
    throw usageError(`--method must be GET, POST, PUT, PATCH or DELETE (got ${o.method})`);
  if (o.data !== undefined) {
    try {
      JSON.parse(o.data);
    } catch {
      throw usageError("--data must be JSON");
    }
  }
  const token = process.env.SVC_TUNNEL_TOKEN;
  if (!token)
    throw usageError(
      "set SVC_TUNNEL_TOKEN to the tunnel's caller token (`svc tunnel caller-token` on the daemon's machine prints it; the relay refuses requests without it)",
    );
  const base = url.endsWith("/") ? url : url + "/";
  const auth = process.env.SVC_REMOTE_AUTH_TOKEN;
  const headers: Record<string, string> = { ...(o.data !== undefined ? { "content-type": "application/json" } : {}) };
  let status: number;
  let body: string;
  if (o.key !== undefined) {
    const key = fromB64u(o.key);
    if (key?.length !== 32)
      throw usageError(
        "--key must be the 43-character base64url key printed by `svc serve` (tunnel end-to-end key: …)",
      );
    const sealed = await sealRequest(
      key,
      {
        method,
        path,
        headers: { ...headers, ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
        ...(o.data !== undefined ? { body: o.data } : {}),
      },
      Date.now(),
    );
    const res = await send(base, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": E2E_CONTENT_TYPE },
      body: sealed.body,
    });
    if (res.status !== 200) throw await relayError(res);
    const answer = await sealed.openResponse(new Uint8Array(await res.arrayBuffer()) as never).catch((err: Error) => {
      throw new SvcError("forbidden", err.message);
    });
    ({ status, body } = answer);
  } else {
    if (auth)
      throw usageError(
        "SVC_REMOTE_AUTH_TOKEN needs --key: a plain tunnel has no way to carry the daemon's token past the relay",
      );
    const res = await send(base + path.slice(1), {
      method,
      headers: { ...headers, authorization: `Bearer ${token}` },
      ...(o.data !== undefined ? { body: o.data } : {}),
    });
    status = res.status;
    body = await res.text();
  }
  if (status >= 400) {
    const e = safeError(body);
    throw new SvcError((e?.code as never) ?? "internal", e?.message ?? `the daemon answered ${status}`);
  }
  println(body);
}

async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
  } catch (err) {
    throw new SvcError("connect", `cannot reach the tunnel at ${new URL(url).host}: ${(err as Error).message}`);
  }
}

async function relayError(res: Response): Promise<SvcError> {
  const e = safeError(await res.text());
  return new SvcError((e?.code as never) ?? "connect", e?.message ?? `the relay answered ${res.status}`);
}

function safeError(text: string): { code?: string; message?: string } | undefined {
  try {
    return (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
  } catch {
    return undefined;
  }
}
