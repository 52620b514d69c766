/** `svc serve`: runs the daemon in the foreground until SIGINT/SIGTERM. */
import "reflect-metadata";
import type { ConfigFlags } from "../config/resolve.js";
import { startDaemon } from "../daemon/daemon.js";
import { svcHome } from "../storage/paths.js";

export async function serve(flags: ConfigFlags): Promise<void> {
  const daemon = await startDaemon({ home: svcHome(), env: process.env, flags });
  process.stdout.write(`svc daemon listening on http://${daemon.info.bind}:${daemon.info.port} (pid ${daemon.info.pid})\n`);
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      void daemon.stop().then(resolve, resolve);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
  // Everything durable is flushed and every module stopped: exit now rather than wait for a handle
  // a plugin left behind (a child's timer, a keep-alive socket), which kept a stopped daemon alive
  // after its providers' readiness had been asked. stdout and stderr are synchronous here.
  process.exit(process.exitCode ?? 0);
}
