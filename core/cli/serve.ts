/** `svc serve`: runs the daemon in the foreground until SIGINT/SIGTERM. */
import "reflect-metadata";
import type { ConfigFlags } from "../config/resolve.js";
import { startDaemon } from "../daemon/daemon.js";
import { svcHome } from "../storage/paths.js";

export async function serve(flags: ConfigFlags): Promise<void> {
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
    daemon = await startDaemon({ home: svcHome(), env: process.env, flags });
  } catch (err) {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    throw err;
  }
  process.stdout.write(`svc daemon listening on http://${daemon.info.bind}:${daemon.info.port} (pid ${daemon.info.pid})\n`);
  await new Promise<void>((resolve) => {
    stopNow = () => void daemon.stop().then(resolve, resolve);
    if (signalled) stopNow();
  });
  // Everything durable is flushed and every module stopped: exit now rather than wait for a handle
  // a plugin left behind (a child's timer, a keep-alive socket), which kept a stopped daemon alive
  // after its providers' readiness had been asked. stdout and stderr are synchronous here.
  process.exit(process.exitCode ?? 0);
}
