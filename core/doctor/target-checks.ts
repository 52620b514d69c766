/**
 * The loaded target plugins' own checks (`TargetInstance.check`), reached through the plugin API
 * only: the built-ins and config `adapters` are loaded as the daemon loads them, each target is set
 * up (not started) with a context whose egress refuses to send, and asked to check its files.
 * Setting up the webhook target opens nothing (its outbox opens on first use), so its check
 * reads the files itself.
 */
import "reflect-metadata";
import { container as root } from "tsyringe";
import { SvcError } from "../errors.js";
import type { ConfigService } from "../config/config-service.js";
import { FileConfigService } from "../config/file-config-service.js";
import { staticConfigService } from "../config/static-config-service.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import type { Egress } from "../plugin-api/egress.js";
import type { SentinelView } from "../plugin-api/context.js";
import type { TargetInstance } from "../plugin-api/target.js";
import { pluginInstance } from "../plugin-host/context.js";
import { loadPlugins } from "../plugin-host/load.js";
import { PluginRegistry } from "../plugin-host/registry.js";
import { createRandom, realSleep, systemClock } from "../runtime/clock.js";
import { registerValue } from "../runtime/inject.js";
import { createLogger } from "../runtime/logger.js";
import { ServiceDirectory } from "../runtime/service-directory.js";
import { homeFile } from "../storage/paths.js";
import { adapterLoadFindings } from "./env/adapters.js";
import { CLOCK, CONFIG, HOME, LOGGER, PLUGINS, RANDOM, SERVICES, SLEEP } from "../tokens.js";

/** svc doctor sends nothing: a target that tries gets this refusal. */
const noEgress: Egress = {
  post: () => Promise.reject(new SvcError("unavailable", "svc doctor sends nothing")),
  close: () => Promise.resolve(),
};

export async function checkTargets(
  home: string,
  sentinels: SentinelView[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<DoctorFinding[]> {
  const logger = createLogger({ level: "error" });
  const config: ConfigService = await FileConfigService.open(homeFile(home, "config"), env, {}).catch(() =>
    staticConfigService({}, { env, home }),
  );
  const registry = new PluginRegistry();
  const c = root.createChildContainer();
  registerValue(c, HOME, home);
  registerValue(c, CLOCK, systemClock);
  registerValue(c, RANDOM, createRandom(systemClock));
  registerValue(c, SLEEP, realSleep);
  registerValue(c, LOGGER, logger);
  registerValue(c, CONFIG, config);
  registerValue(c, PLUGINS, registry);
  const services = new ServiceDirectory();
  services.provide("egress", noEgress);
  registerValue(c, SERVICES, services);
  const out: DoctorFinding[] = [];
  // Packages that fail to load are told (the daemon would start without them); the rest are checked.
  out.push(
    ...adapterLoadFindings(await loadPlugins(registry, { ids: config.current().effective.adapters ?? [], env, cwd })),
  );
  for (const kind of registry.kinds("target")) {
    let instance: TargetInstance;
    try {
      instance = (await pluginInstance(c, "target", kind)) as TargetInstance;
    } catch (err) {
      out.push({
        severity: "warn",
        file: ".",
        message: `target plugin "${kind}" could not be set up, so its files were not checked: ${(err as Error).message}`,
        fix: "see svc adapters ls --load",
      });
      continue;
    }
    if (typeof instance.check !== "function") continue;
    try {
      out.push(...(await instance.check({ sentinels })));
    } catch (err) {
      out.push({
        severity: "warn",
        file: ".",
        message: `the check of target "${kind}" failed: ${(err as Error).message}`,
        fix: "run svc doctor again; if it keeps failing, report it",
      });
    }
  }
  return out;
}
