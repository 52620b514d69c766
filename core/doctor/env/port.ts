/**
 * The daemon's port, when no daemon runs for this home: if something else listens on
 * `daemon.bind`:`daemon.port`, `svc serve` would fail to bind. It tries to listen there and closes
 * at once (loopback or the configured address only; nothing is sent anywhere); when the holder
 * answers `/health` as an svc daemon, the finding says so and gives its pid.
 */
import { createServer } from "node:net";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { envFinding } from "./finding.js";

function tryListen(bind: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host: bind, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

async function svcDaemonAt(bind: string, port: number): Promise<number | undefined> {
  const host = bind.includes(":") ? `[${bind}]` : bind === "0.0.0.0" ? "127.0.0.1" : bind === "::" ? "[::1]" : bind;
  // A timer that holds the process open: a holder that hangs up can leave fetch unsettled, and
  // AbortSignal.timeout's own timer would let the process exit with the report unwritten.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 2_000);
  const body = await fetch(`http://${host}:${port}/health`, { signal: abort.signal })
    .then((r) => (r.ok ? (r.json() as Promise<{ ok?: unknown; pid?: unknown; version?: unknown }>) : undefined))
    .catch(() => undefined)
    .finally(() => clearTimeout(timer));
  return body?.ok === true && typeof body.pid === "number" && typeof body.version === "string" ? body.pid : undefined;
}

export async function checkDaemonPort(bind: string, port: number, daemonRunning: boolean): Promise<DoctorFinding[]> {
  if (daemonRunning || port === 0) return [];
  const code = await tryListen(bind, port);
  if (code === undefined) return [];
  const at = `${bind}:${port}`;
  const fix = `stop what holds it, or give this home another port: svc config set daemon.port <n> (or svc serve --port <n>)`;
  if (code === "EADDRINUSE") {
    const pid = await svcDaemonAt(bind, port);
    const who = pid !== undefined ? `another svc daemon (pid ${pid}, of another SVC_HOME)` : "another program";
    return [
      envFinding(
        "port",
        "warn",
        `no daemon runs for this home, and ${at} is in use by ${who}: svc serve would fail to bind it`,
        fix,
      ),
    ];
  }
  if (code === "EADDRNOTAVAIL")
    return [
      envFinding(
        "port",
        "warn",
        `daemon.bind ${bind} is not an address of this machine: svc serve would fail to bind ${at}`,
        "svc config set daemon.bind 127.0.0.1 (or an address this machine has)",
      ),
    ];
  if (code === "EACCES")
    return [
      envFinding("port", "warn", `binding ${at} is not permitted for this user (EACCES): svc serve would fail`, fix),
    ];
  return [envFinding("port", "warn", `svc serve could not bind ${at} (${code})`, fix)];
}
