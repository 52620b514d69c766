/**
 * Typed injection tokens. A token carries the type of what it resolves to, so
 * `resolve(container, CLOCK)` is a `Clock` without casts at the call site.
 *
 * A token whose type lives in a module that itself injects tokens (SESSIONS, SESSION_ADAPTERS,
 * WORKSPACES, REMOTE) is declared beside that type instead, so this file imports nothing that
 * imports it back (test/architecture.test.ts).
 */
import type { DependencyContainer } from "tsyringe";
import type { Clock, Random, Sleep } from "./runtime/clock.js";
import type { Logger } from "./runtime/logger.js";
import type { ConfigService } from "./config/config-service.js";
import type { PluginRegistry } from "./plugin-host/registry.js";
import type { CredentialStore } from "./plugin-api/context.js";
import type { RouteTable } from "./daemon/route-table.js";
import type { ToolTable } from "./daemon/tool-table.js";
import type { DaemonEventBus } from "./daemon/event-bus.js";

export type Token<T> = symbol & { readonly __type?: T };

export function token<T>(name: string): Token<T> {
  return Symbol.for(`svc.token.${name}`) as Token<T>;
}

export function resolve<T>(container: DependencyContainer, tok: Token<T>): T {
  return container.resolve<T>(tok);
}

/** `$SVC_HOME`, absolute. */
export const HOME = token<string>("home");
/** The process environment the services read (a copy in tests). */
export const ENV = token<NodeJS.ProcessEnv>("env");
export const CLOCK = token<Clock>("clock");
export const RANDOM = token<Random>("random");
export const SLEEP = token<Sleep>("sleep");
export const LOGGER = token<Logger>("logger");
export const CONFIG = token<ConfigService>("config");
export const PLUGINS = token<PluginRegistry>("plugins");
export const CREDENTIALS = token<CredentialStore>("credentials");
export const ROUTES = token<RouteTable>("routes");
export const TOOLS = token<ToolTable>("tools");
export const DAEMON_EVENTS = token<DaemonEventBus>("daemon-events");
export const SERVICES = token<import("./runtime/service-directory.js").ServiceDirectory>("services");
export const SENTINELS = token<import("./sentinels/service.js").SentinelService>("sentinels");
/**
 * Where the daemon's HTTP listener is (set once it listens, before the modules start), and the
 * per-boot key its own forwarded requests carry (core/daemon/remote-marker.ts).
 */
export const LISTEN = token<{ port: number; bind: string; forwardKey: string }>("listen");
/** The host egress behind the SSRF gate (core/egress), offered to plugins as the service "egress". */
export const EGRESS = token<import("./egress/host-egress.js").HostEgress>("egress");
/** The 1-minute load average and core count the provisioning queue's load guard reads (tests inject one). */
export const LOAD_PROBE = token<import("./workspaces/provision-queue.js").LoadProbe>("load-probe");
