/** `svc serve`: runs the daemon in the foreground until SIGINT/SIGTERM. */
import "reflect-metadata";
import type { ConfigFlags } from "../config/resolve.js";
import { startDaemon } from "../daemon/daemon.js";
import { svcHome } from "../storage/paths.js";
import { CONFIG, DAEMON_EVENTS, resolve } from "../tokens.js";
import { REMOTE } from "../remote/services.js";
import { toB64u } from "../remote/web/bytes.js";
import { DEFAULT_LOG_LIMITS } from "../runtime/log-file.js";
import { readEffectiveConfig } from "../config/read-effective.js";
import { startIdleCollector } from "../runtime/idle-collector.js";
import { daemonLog } from "./serve-log.js";
import { releaseYoungGeneration } from "../runtime/young-generation.js";

/** Prints the tunnel's public URL each time it opens (and, with e2e, the key clients seal to). */
function announceTunnel(c: import("tsyringe").DependencyContainer): void {
  // The remote room is loaded at start whenever there is a tunnel to open.
  if (!c.isRegistered(REMOTE)) return;
  const remote = resolve(c, REMOTE);
  const tunnel = remote.tunnel;
  if (!tunnel) return;
  const print = (url: string) => {
    process.stdout.write(`tunnel open: ${url}\n`);
    if (tunnel.status.e2e)
      process.stdout.write(
        `tunnel end-to-end key: ${toB64u(remote.identity.key.publicKey)} (fingerprint ${remote.identity.fingerprint})\n`,
      );
  };
  if (tunnel.status.state === "connected" && tunnel.status.publicUrl) print(tunnel.status.publicUrl);
  resolve(c, DAEMON_EVENTS).subscribe((e) => {
    if (e.type === "tunnel:open") print((e.data as { url: string }).url);
  });
}

/**
 * `detached`: the child `svc start` spawned: it logs to the file only (its stderr is the log file,
 * for what is not a log line, such as a crash's stack) and prints no banner (its stdout is /dev/null).
 */
export async function serve(flags: ConfigFlags, options: { detached?: boolean } = {}): Promise<void> {
  const home = svcHome();
  const log = daemonLog(home, { console: !options.detached });
  // A detached daemon has nowhere else to say why it did not start; a foreground one writes the
  // file only once started (a start that fails writes nothing under $SVC_HOME).
  if (options.detached) {
    // The rotation limits as configured from the first line (a file that does not parse: the
    // defaults, and the start fails saying why).
    const limits = await readEffectiveConfig(flags)
      .then(({ effective: { daemon: d } }) => ({ maxBytes: d.logMaxBytes, files: d.logFiles }))
      .catch(() => DEFAULT_LOG_LIMITS);
    log.attach(() => limits);
  }
  // The handlers go in before the daemon starts: a SIGTERM that arrives once runtime.json exists
  // (a supervisor or test that saw the file) but before start-up returned must stop the daemon
  // cleanly, not kill the process with Node's default action.
  let signalled = false;
  let stopNow: (() => void) | undefined;
  const onSignal = () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    signalled = true;
    stopNow?.();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let daemon: Awaited<ReturnType<typeof startDaemon>>;
  try {
    daemon = await startDaemon({ home, env: process.env, flags, logger: log.logger });
    releaseYoungGeneration();
  } catch (err) {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    throw err;
  }
  const config = resolve(daemon.container, CONFIG);
  log.attach(() => {
    const d = config.current().effective.daemon;
    return { maxBytes: d.logMaxBytes, files: d.logFiles };
  });
  if (!options.detached) {
    process.stdout.write(
      `svc daemon listening on http://${daemon.info.bind}:${daemon.info.port} (pid ${daemon.info.pid})\n`,
    );
    for (const w of daemon.info.warnings ?? []) process.stderr.write(`warning: ${w}\n`);
  }
  announceTunnel(daemon.container);
  // Memory grown in a burst goes back once the daemon is idle again (see idle-collector.ts).
  const stopCollector = startIdleCollector(log.logger);
  await new Promise<void>((resolve) => {
    stopNow = () => void (stopCollector(), daemon.stop().then(resolve, resolve));
    if (signalled) stopNow();
  });
  // Everything durable is flushed and every module stopped: exit now rather than wait for a handle
  // a plugin left behind (a child's timer, a keep-alive socket), which kept a stopped daemon alive
  // after its providers' readiness had been asked. stdout and stderr are synchronous here.
  process.exit(process.exitCode ?? 0);
}
