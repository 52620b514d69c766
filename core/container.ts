/**
 * The composition root: the only place that registers services. Each process (daemon, CLI verb,
 * test) makes its own child container; tests override services on a child of it.
 */
import "reflect-metadata";
import { container as root, type DependencyContainer } from "tsyringe";
import { createRandom, realSleep, systemClock, type Clock, type Sleep } from "./runtime/clock.js";
import { createLogger, type Logger } from "./runtime/logger.js";
import { registerClass, registerValue } from "./runtime/inject.js";
import { ServiceDirectory } from "./runtime/service-directory.js";
import { FileConfigService } from "./config/file-config-service.js";
import type { ConfigFlags } from "./config/resolve.js";
import { PluginRegistry } from "./plugin-host/registry.js";
import { RouteTable } from "./daemon/route-table.js";
import { ToolTable } from "./daemon/tool-table.js";
import { DaemonEventBus } from "./daemon/event-bus.js";
import { MCP_EXTENSIONS, createMcpExtensionRegistry } from "./daemon/mcp/extensions.js";
import { homeFile } from "./storage/paths.js";
import { FileCredentialStore } from "./storage/credentials.js";
import { createHostEgress } from "./egress/host-egress.js";
import {
  CLOCK,
  CONFIG,
  CREDENTIALS,
  DAEMON_EVENTS,
  EGRESS,
  ENV,
  HOME,
  LOAD_PROBE,
  LOGGER,
  PLUGINS,
  RANDOM,
  ROUTES,
  SERVICES,
  SLEEP,
  TOOLS,
  resolve,
} from "./tokens.js";
import { osLoadProbe, type LoadProbe } from "./workspaces/load-probe.js";
import { WORKSPACES, WorkspaceService } from "./workspaces/workspace-service.js";
import { HELD_SECRETS, HeldSecretRegistry } from "./redaction/held-secrets.js";

export interface ContainerOptions {
  home: string;
  env?: NodeJS.ProcessEnv;
  flags?: ConfigFlags;
  logger?: Logger;
  clock?: Clock;
  sleep?: Sleep;
  /** The load guard's probe; default the OS load average and core count. */
  loadProbe?: LoadProbe;
}

export async function createContainer(options: ContainerOptions): Promise<DependencyContainer> {
  const c = root.createChildContainer();
  const env = options.env ?? process.env;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger();
  registerValue(c, HOME, options.home);
  registerValue(c, ENV, env);
  registerValue(c, CLOCK, clock);
  registerValue(c, RANDOM, createRandom(clock));
  registerValue(c, SLEEP, options.sleep ?? realSleep);
  registerValue(c, LOGGER, logger);
  const config = await FileConfigService.open(homeFile(options.home, "config"), env, options.flags ?? {}, logger);
  registerValue(c, CONFIG, config);
  registerValue(c, PLUGINS, new PluginRegistry());
  registerClass(c, CREDENTIALS, FileCredentialStore);
  const routes = new RouteTable();
  const tools = new ToolTable();
  const events = new DaemonEventBus();
  registerValue(c, ROUTES, routes);
  registerValue(c, TOOLS, tools);
  registerValue(c, DAEMON_EVENTS, events);
  // MCP extensions served on /mcp beside the tools (core/daemon/mcp/extensions.ts).
  registerValue(c, MCP_EXTENSIONS, createMcpExtensionRegistry());
  // The host services every plugin may ask for by name; areas add theirs as they start.
  const services = new ServiceDirectory();
  services.provide("routes", routes);
  services.provide("tools", tools);
  services.provide("events", events);
  services.provide("credentials", resolve(c, CREDENTIALS));
  const egress = createHostEgress({
    allowSubnets: () => config.current().effective.webhooks.allowSubnets,
    logger: logger.child({ module: "egress" }),
  });
  registerValue(c, EGRESS, egress);
  services.provide("egress", egress);
  // Secrets plugins keep (the webhook target's vault), for the redaction floor (core/redaction).
  const heldSecrets = new HeldSecretRegistry();
  registerValue(c, HELD_SECRETS, heldSecrets);
  services.provide("heldSecrets", heldSecrets);
  registerValue(c, SERVICES, services);
  registerValue(c, LOAD_PROBE, options.loadProbe ?? osLoadProbe);
  registerClass(c, WORKSPACES, WorkspaceService);
  return c;
}
