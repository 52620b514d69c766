/**
 * Typed injection tokens. A token carries the type of what it resolves to, so
 * `resolve(container, CLOCK)` is a `Clock` without casts at the call site.
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
/** The session runtime (core/sessions). */
export const SESSIONS = token<import("./sessions/runtime.js").SessionRuntime>("sessions");
/** How the session runtime finds adapter plugins (set up through the plugin host). */
export const SESSION_ADAPTERS = token<import("./sessions/adapter-lookup.js").AdapterLookup>("session-adapters");
/** The host egress behind the SSRF gate (core/egress), offered to plugins as the service "egress". */
/** Where the daemon's HTTP listener is (set once it listens, before the modules start). */
export const LISTEN = token<{ port: number; bind: string }>("listen");
/** The remote room's services (core/remote): pairings and the tunnel. */
export const REMOTE = token<import("./remote/room.js").RemoteServices>("remote");
export const EGRESS = token<import("./egress/host-egress.js").HostEgress>("egress");
/** Workspaces (core/workspaces): worktrees, the provisioning queue, lineage tokens, spawn keys, the gh shim. */
export const WORKSPACES = token<import("./workspaces/workspace-service.js").WorkspaceService>("workspaces");
/** The 1-minute load average and core count the provisioning queue's load guard reads (tests inject one). */
export const LOAD_PROBE = token<import("./workspaces/provision-queue.js").LoadProbe>("load-probe");
