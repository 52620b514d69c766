/** `svc serve`: runs the daemon in the foreground until SIGINT/SIGTERM. */
import "reflect-metadata";
import { untilSignal } from "./until-signal.js";
import type { ConfigFlags } from "../config/resolve.js";
import { startDaemon } from "../daemon/daemon.js";
import { svcHome } from "../storage/paths.js";
import { DAEMON_EVENTS, REMOTE, resolve } from "../tokens.js";
import { toB64u } from "../remote/web/bytes.js";

/** Prints the tunnel's public URL each time it opens (and, with e2e, the key clients seal to). */
function announceTunnel(c: import("tsyringe").DependencyContainer): void {
  const remote = resolve(c, REMOTE);
  const tunnel = remote.tunnel;
  if (!tunnel) return;
  const print = (url: string) => {
    process.stdout.write(`tunnel open: ${url}\n`);
    if (tunnel.status.e2e) process.stdout.write(`tunnel end-to-end key: ${toB64u(remote.identity.key.publicKey)} (fingerprint ${remote.identity.fingerprint})\n`);
  };
  if (tunnel.status.state === "connected" && tunnel.status.publicUrl) print(tunnel.status.publicUrl);
  resolve(c, DAEMON_EVENTS).subscribe((e) => {
    if (e.type === "tunnel:open") print((e.data as { url: string }).url);
  });
}

export async function serve(flags: ConfigFlags): Promise<void> {
  const daemon = await startDaemon({ home: svcHome(), env: process.env, flags });
  process.stdout.write(`svc daemon listening on http://${daemon.info.bind}:${daemon.info.port} (pid ${daemon.info.pid})\n`);
  announceTunnel(daemon.container);
  await untilSignal(() => daemon.stop());
  // Everything durable is flushed and every module stopped: exit now rather than wait for a handle
  // a plugin left behind (a child's timer, a keep-alive socket), which kept a stopped daemon alive
  // after its providers' readiness had been asked. stdout and stderr are synchronous here.
  process.exit(process.exitCode ?? 0);
}
