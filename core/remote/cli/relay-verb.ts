/** `svc relay serve`: runs the relay until SIGINT/SIGTERM, logging one JSON line per event (no payloads). */
import { untilSignal } from "../../cli/until-signal.js";
import { readFile } from "node:fs/promises";
import { usageError } from "../../cli/output.js";
import { DEFAULT_LIMITS, resolveLimits, ZERO_ALLOWED, type RelayLimits } from "../relay/limits.js";
import { startRelay } from "../relay/relay-server.js";

interface RelayServeOptions {
  port?: string;
  bind?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** Refused: a token on argv is visible to every user through `ps`. */
  tunnelToken?: unknown;
  tunnelTokenFile?: string;
  publicUrl?: string;
  limit?: string[];
}

/** `--limit name=value`: a known bound, a positive whole number (0 allowed where it means "none"); bounds that contradict are refused. */
export function parseLimits(items: readonly string[]): Partial<RelayLimits> {
  const out: Partial<RelayLimits> = {};
  const names = Object.keys(DEFAULT_LIMITS) as Array<keyof RelayLimits>;
  for (const item of items) {
    const m = /^([A-Za-z]+)=(\d+)$/.exec(item);
    const name = m?.[1] as keyof RelayLimits | undefined;
    if (!m || !name || !names.includes(name))
      throw usageError(`--limit ${JSON.stringify(item)}: expected name=value with a name among ${names.join(", ")}`);
    const value = Number(m[2]);
    const least = ZERO_ALLOWED.has(name) ? 0 : 1;
    if (!Number.isSafeInteger(value) || value < least)
      throw usageError(`--limit ${name} must be a whole number of at least ${least} (got ${m[2]})`);
    out[name] = value;
  }
  try {
    resolveLimits(out);
  } catch (err) {
    throw usageError(`--limit: ${(err as Error).message}`);
  }
  return out;
}

/**
 * The tunnel host tokens: `--tunnel-token-file` (one a line; blank lines and `#` comments skipped)
 * and `SVC_RELAY_TUNNEL_TOKENS` (comma-separated). Never argv, which `ps` shows to everyone.
 */
export async function tunnelTokens(o: RelayServeOptions, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  if (o.tunnelToken !== undefined) {
    throw usageError(
      "--tunnel-token would put the secret on the command line, where `ps` shows it to every user: put the tokens in a file (one a line) and pass --tunnel-token-file <file>, or set SVC_RELAY_TUNNEL_TOKENS (comma-separated)",
    );
  }
  const fromEnv = (env.SVC_RELAY_TUNNEL_TOKENS ?? "")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  if (o.tunnelTokenFile === undefined) return fromEnv;
  let text: string;
  try {
    text = await readFile(o.tunnelTokenFile, "utf8");
  } catch (err) {
    throw usageError(
      `--tunnel-token-file ${o.tunnelTokenFile}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (err as Error).message}`,
    );
  }
  const fromFile = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  if (fromFile.length === 0)
    throw usageError(
      `--tunnel-token-file ${o.tunnelTokenFile} holds no token (one a line; lines starting with # are comments)`,
    );
  if (fromFile.some((t) => /\s/.test(t)))
    throw usageError(`--tunnel-token-file ${o.tunnelTokenFile}: a token cannot contain spaces (one token a line)`);
  return [...fromFile, ...fromEnv];
}

export async function relayServe(o: RelayServeOptions): Promise<void> {
  if ((o.tlsCert === undefined) !== (o.tlsKey === undefined))
    throw usageError("--tls-cert and --tls-key go together: pass both, or neither for plain ws://");
  if (o.port !== undefined && (!/^\d+$/.test(o.port) || Number(o.port) > 65535))
    throw usageError(`--port must be a port number from 0 to 65535 (got ${JSON.stringify(o.port)})`);
  if (o.publicUrl !== undefined && !/^https?:\/\/[^\s/?#]+/.test(o.publicUrl))
    throw usageError(`--public-url must be an http(s) URL (got ${JSON.stringify(o.publicUrl)})`);
  const limits = parseLimits(o.limit ?? []);
  const tokens = await tunnelTokens(o);
  const tls = o.tlsCert && o.tlsKey ? { cert: await readFile(o.tlsCert), key: await readFile(o.tlsKey) } : undefined;
  const relay = await startRelay({
    port: o.port === undefined ? 8787 : Number(o.port),
    bind: o.bind ?? "127.0.0.1",
    ...(tls ? { tls } : {}),
    tunnelTokens: tokens,
    ...(o.publicUrl ? { publicUrl: o.publicUrl } : {}),
    limits,
    log: (message, fields) =>
      process.stderr.write(JSON.stringify({ at: new Date().toISOString(), message, ...fields }) + "\n"),
  });
  process.stdout.write(`svc relay listening: rendezvous ${relay.url}, tunnels ${relay.url}/tunnel\n`);
  await untilSignal(() => relay.close());
  process.exit(0);
}
