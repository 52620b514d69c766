/**
 * The target plugins set up as the daemon sets them up, without a daemon (`svc doctor`, `svc store
 * migrate`): the built-ins and config `adapters` loaded, each target set up (never started) with a
 * context whose egress refuses to send. `services` adds host services (the team store's
 * `teamDatabase` and `teamJobs` when the targets are to work on PostgreSQL).
 */
import "reflect-metadata";
import { container as root } from "tsyringe";
import { SvcError } from "../errors.js";
import type { ConfigService } from "../config/config-service.js";
import { FileConfigService } from "../config/file-config-service.js";
import { staticConfigService } from "../config/static-config-service.js";
import type { HostServices } from "../plugin-api/context.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import type { Egress } from "../plugin-api/egress.js";
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

/** Nothing is sent offline: a target that tries gets this refusal. */
const noEgress: Egress = {
  post: () => Promise.reject(new SvcError("unavailable", "svc sends nothing offline (doctor, store migrate)")),
  close: () => Promise.resolve(),
};

export interface OfflineTargets {
  /** Set-up targets by kind. */
  instances: Map<string, TargetInstance>;
  /** Adapter packages that failed to load, targets that could not be set up. */
  findings: DoctorFinding[];
}

export async function offlineTargets(opts: {
  home: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  services?: Partial<Pick<HostServices, "teamDatabase" | "teamJobs">>;
}): Promise<OfflineTargets> {
  const { home, env, cwd } = opts;
  const config: ConfigService = await FileConfigService.open(homeFile(home, "config"), env, {}).catch(() =>
    staticConfigService({}, { env, home }),
  );
  const registry = new PluginRegistry();
  const c = root.createChildContainer();
  registerValue(c, HOME, home);
  registerValue(c, CLOCK, systemClock);
  registerValue(c, RANDOM, createRandom(systemClock));
  registerValue(c, SLEEP, realSleep);
  registerValue(c, LOGGER, createLogger({ level: "error" }));
  registerValue(c, CONFIG, config);
  registerValue(c, PLUGINS, registry);
  const services = new ServiceDirectory();
  services.provide("egress", noEgress);
  if (opts.services?.teamDatabase) services.provide("teamDatabase", opts.services.teamDatabase);
  if (opts.services?.teamJobs) services.provide("teamJobs", opts.services.teamJobs);
  registerValue(c, SERVICES, services);
  // Packages that fail to load are told (the daemon would start without them); the rest are set up.
  const findings = adapterLoadFindings(
    await loadPlugins(registry, { ids: config.current().effective.adapters ?? [], env, cwd }),
  );
  const instances = new Map<string, TargetInstance>();
  for (const kind of registry.kinds("target")) {
    try {
      instances.set(kind, (await pluginInstance(c, "target", kind)) as TargetInstance);
    } catch (err) {
      findings.push({
        severity: "warn",
        file: ".",
        message: `target plugin "${kind}" could not be set up, so its records were not checked: ${(err as Error).message}`,
        fix: "see svc adapters ls --load",
      });
    }
  }
  return { instances, findings };
}
