/**
 * The daemon's lifecycle: single-instance guard, container, modules, HTTP listener, runtime.json,
 * clean stop on SIGINT/SIGTERM.
 */
import "reflect-metadata";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { rmdir } from "node:fs/promises";
import type { DependencyContainer } from "tsyringe";
import { createContainer, type ContainerOptions } from "../container.js";
import { SvcError, diskFullError } from "../errors.js";
import { noRoomToStart, roomFor } from "../storage/free-space.js";
import { withFileLock } from "../storage/lock.js";
import { homeFile } from "../storage/paths.js";
import { CONFIG, LISTEN, LOGGER, PLUGINS, ROUTES, resolve } from "../tokens.js";
import { missingRouteProblem } from "../plugin-host/missing-route.js";
import { registerValue } from "../runtime/inject.js";
import { SVC_VERSION } from "../version.js";
import { isLoopbackBind } from "./host-names.js";
import { DaemonHttpServer } from "./http-server.js";
import { dashboardPrincipal } from "../dashboard/cookie-auth.js";
import { DASHBOARD_LOGINS } from "../dashboard/logins.js";
import { openDoorRefusal } from "./open-door.js";
import { DAEMON_MODULES } from "./modules.js";
import type { DaemonModule } from "./module.js";
import { liveRuntimeInfo, removeRuntimeInfo, writeRuntimeInfo, type RuntimeInfo } from "./runtime-file.js";

export interface RunningDaemon {
  container: DependencyContainer;
  info: RuntimeInfo;
  stop(): Promise<void>;
}

export async function startDaemon(options: ContainerOptions & { modules?: DaemonModule[] }): Promise<RunningDaemon> {
  const fresh = !existsSync(options.home);
  try {
    await roomToStart(options.home);
    return await startLocked(options);
  } catch (err) {
    // A start that failed leaves no trace: not even the $SVC_HOME folder the lock needed (rmdir
    // removes it only when nothing else was written there).
    if (fresh) await rmdir(options.home).catch(() => undefined);
    // A write that found the disk full after all (another process took the room meanwhile): the
    // same error as the check's, with what is free now.
    const room = diskFullError(err) ? await roomFor(options.home, []) : undefined;
    throw room ? noRoomToStart(options.home, room, err) : err;
  }
}

/**
 * Before anything is written (the lock, the stores' start-up writes, runtime.json): the daemon's
 * room must be free (core/storage/free-space.ts), else the start is refused saying how much to free.
 */
async function roomToStart(home: string): Promise<void> {
  const room = await roomFor(home, []);
  if (!room || room.ok) return;
  const running = await liveRuntimeInfo(home);
  if (running) throw alreadyRunning(home, running);
  throw noRoomToStart(home, room);
}

const alreadyRunning = (home: string, running: RuntimeInfo): SvcError =>
  new SvcError(
    "daemon_running",
    `an svc daemon is already running for ${home} (pid ${running.pid}, port ${running.port}); stop it first or use another SVC_HOME`,
  );

function startLocked(options: ContainerOptions & { modules?: DaemonModule[] }): Promise<RunningDaemon> {
  const { home } = options;
  // The lock makes "is one running? then I am" atomic across processes.
  return withFileLock(homeFile(home, "runtime"), async () => {
    const running = await liveRuntimeInfo(home);
    if (running) throw alreadyRunning(home, running);
    const c = await createContainer(options);
    const logger = resolve(c, LOGGER);
    const config = resolve(c, CONFIG);
    for (const w of config.current().warnings) logger.warn(w);
    const refusal = openDoorRefusal(config.current().effective.daemon);
    if (refusal) throw new SvcError("config_invalid", refusal);
    const modules = options.modules ?? DAEMON_MODULES;
    const started: DaemonModule[] = [];
    const bootToken = randomBytes(32).toString("base64url");
    // Never leaves the process: only the daemon's own forwarder can name a remote caller (remote-marker.ts).
    const forwardKey = randomBytes(32).toString("base64url");
    const daemonCfg = () => config.current().effective.daemon;
    const bind = daemonCfg().bind;
    // Bound beyond loopback, the daemon never serves without a stable token: unsetting it while it
    // runs leaves the one it started with in force until it stops (open-door.ts warns of it).
    const startToken = isLoopbackBind(bind) ? undefined : daemonCfg().authToken;
    const server = new DaemonHttpServer({
      routes: resolve(c, ROUTES),
      logger,
      hosts: () => ({ bind, allowedHosts: daemonCfg().allowedHosts ?? [] }),
      tokens: () => ({ stable: daemonCfg().authToken ?? startToken, boot: bootToken, forward: forwardKey }),
      policy: () => ({ allowedOrigins: daemonCfg().allowedOrigins ?? [] }),
      cookiePrincipal: (method, headers) =>
        c.isRegistered(DASHBOARD_LOGINS as never)
          ? dashboardPrincipal(resolve(c, DASHBOARD_LOGINS), resolve(c, LISTEN).port, method, headers)
          : undefined,
      explainMissing: (method, path) => missingRouteProblem(resolve(c, PLUGINS), method, path),
    });
    const stopModules = async () => {
      for (const m of [...started].reverse()) {
        await m
          .stop?.(c)
          .catch((err: Error) => logger.error("module stop failed", { module: m.name, error: err.message }));
      }
    };
    let info: RuntimeInfo;
    try {
      // Bind first: a daemon that cannot have its port opens no store and writes nothing under
      // $SVC_HOME. Until the modules are up it answers 503 (runtime.json, which the CLI reads,
      // is written only once they are; its room was kept free by roomToStart, and the stores'
      // optional start-up writes leave it free).
      const port = await server.listen(daemonCfg().port, daemonCfg().bind);
      registerValue(c, LISTEN, { port, bind: daemonCfg().bind, forwardKey });
      for (const m of modules) {
        await m.start(c);
        started.push(m);
      }
      info = {
        pid: process.pid,
        port,
        bind: daemonCfg().bind,
        token: bootToken,
        startedAt: Date.now(),
        version: SVC_VERSION,
      };
      // A runtime.json that cannot be written stops the modules too: a daemon the CLI cannot find
      // must not keep running (it kept delivering, with no way to stop it but its pid).
      server.ready();
      await writeRuntimeInfo(home, info);
    } catch (err) {
      await stopModules();
      await server.close();
      if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") {
        throw new SvcError(
          "unavailable",
          `port ${daemonCfg().port} on ${daemonCfg().bind} is already in use; choose another with --port or daemon.port`,
        );
      }
      throw err;
    }
    logger.info("daemon listening", { bind: info.bind, port: info.port, pid: info.pid, version: SVC_VERSION });
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        for (const m of started) await m.drain?.(c).catch(() => undefined);
        await server.close();
        await stopModules();
        await removeRuntimeInfo(home, process.pid);
        logger.info("daemon stopped", { pid: process.pid });
      })());
    return { container: c, info, stop };
  });
}
