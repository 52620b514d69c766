/**
 * The child process of {@link checkPackageLoads} (scratch-load.ts): loads one package as the daemon
 * would, in a scratch `$SVC_HOME` the parent made, and tells the parent over IPC what it is doing
 * and how it ended. Import and shape check are the plugin host's own (load.ts); each plugin with a
 * setup is set up through {@link pluginInstance}, with the daemon's composition root on the scratch
 * home, so routes, tools, events and credentials are real but reach nothing of the user's. Egress
 * refuses to send; the services only the running daemon offers (sentinels, sessions, daemonEvents)
 * may be obtained but refuse to be used, since nothing runs here after setup.
 */
import type { DependencyContainer } from "tsyringe";
import { createContainer } from "../container.js";
import { SvcError } from "../errors.js";
import type { Egress } from "../plugin-api/egress.js";
import { createLogger } from "../runtime/logger.js";
import { PLUGINS, SERVICES, resolve } from "../tokens.js";
import { pluginInstance } from "./context.js";
import { importPackage } from "./load.js";
import { loadManifest, PhaseError } from "./manifest.js";
import { readPackageJson } from "./resolve-package.js";
import type { ScratchMessage } from "./scratch-load.js";

const NOT_HERE = "svc adapters install checks the package in a scratch host, which runs no";

function refusing(service: string): unknown {
  const fail = (): never => {
    throw new SvcError("unavailable", `${NOT_HERE} ${service}: use it after setup, not during it`);
  };
  return new Proxy({}, { get: (_t, prop) => (prop === "then" ? undefined : fail) });
}

const noEgress: Egress = {
  post: () => Promise.reject(new SvcError("unavailable", `${NOT_HERE}thing outbound: setup must not send`)),
  close: () => Promise.resolve(),
};

function send(m: ScratchMessage): Promise<void> {
  return new Promise((done) => process.send!(m, () => done()));
}

async function scratchContainer(home: string): Promise<DependencyContainer> {
  const c = await createContainer({
    home,
    env: { ...process.env, SVC_HOME: home },
    logger: createLogger({ level: "error" }),
  });
  const services = resolve(c, SERVICES);
  services.provide("egress", noEgress);
  for (const name of ["sentinels", "sessions", "daemonEvents"] as const)
    services.provide(name, refusing(name) as never);
  return c;
}

async function main(dir: string, home: string, timeoutMs: number): Promise<ScratchMessage> {
  const packageJson = readPackageJson(dir);
  const name = packageJson.name ?? dir;
  const manifest = loadManifest(dir, packageJson);
  const source = {
    package: name,
    builtin: false,
    resolvedFrom: "install" as const,
    dir,
    ...(typeof packageJson.version === "string" ? { version: packageJson.version } : {}),
  };
  await send({ step: "import" });
  let loaded;
  try {
    loaded = await importPackage({ label: name, source, manifest });
  } catch (err) {
    return { done: "failed", phase: err instanceof PhaseError ? err.phase : "import", error: (err as Error).message };
  }
  const c = await scratchContainer(home);
  const registry = resolve(c, PLUGINS);
  for (const plugin of loaded) registry.add(plugin);
  for (const plugin of loaded) {
    if (plugin.type === "redactor") continue; // a pure function: no setup
    const entry = manifest.plugins.find((p) => p.type === plugin.type && p.kind === plugin.kind)!.entry;
    await send({ step: "setup", plugin: `${plugin.type} ${plugin.kind} (${entry})` });
    try {
      await pluginInstance(c, plugin.type, plugin.kind, timeoutMs);
    } catch (err) {
      const cause = (err as { cause?: Error }).cause ?? (err as Error);
      const what =
        cause instanceof SvcError && (cause.code === "timeout" || cause.code === "plugin_load_failed")
          ? cause.message
          : `its setup threw: ${cause.message}`;
      return { done: "failed", phase: "setup", error: `${entry} (${plugin.type} ${plugin.kind}): ${what}` };
    }
  }
  return { done: "ok", plugins: loaded.map((p) => `${p.type} ${p.kind}`) };
}

const [dir, home, timeout] = process.argv.slice(2);
// The host's timers do not keep a process alive; this one does, so a setup that never settles runs
// into its timeout instead of ending the process quietly.
setInterval(() => undefined, 60_000);
const result = await main(dir!, home!, Number(timeout)).catch(
  (err: unknown): ScratchMessage => ({
    done: "failed",
    phase: err instanceof PhaseError ? err.phase : "import",
    error: (err as Error).message,
  }),
);
await send(result);
process.exit(0);
