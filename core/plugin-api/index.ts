/**
 * The public API for plugin authors: `import { defineProvider } from "svc/plugin-api"`.
 * Everything a plugin may use reaches it through its {@link PluginContext}.
 */
export type { SvcEvent, DaemonEvent, DaemonEventSink } from "./events.js";
export type { RouteAuth, RouteDef, RouteRequest, RouteResponse, RouteRegistry, HttpMethod } from "./http.js";
export type { ToolDef, ToolRegistry, ToolCallContext } from "./tools.js";
export type {
  PluginContext,
  HostServices,
  SentinelView,
  SentinelIngress,
  IngestResult,
  CredentialStore,
  Clock,
  Random,
  Sleep,
  Logger,
} from "./context.js";
export { defineProvider, type ProviderPlugin, type ProviderInstance, type ProviderReadiness } from "./provider.js";
export { defineTarget, type TargetPlugin, type TargetInstance, type TargetAck, type TargetDelivery, type TargetCreateMeta } from "./target.js";
export { defineAdapter, type AdapterPlugin, type AdapterInstance } from "./adapter.js";
export { SvcError, type SvcErrorCode } from "../errors.js";

export type AnyPlugin = import("./provider.js").ProviderPlugin | import("./target.js").TargetPlugin | import("./adapter.js").AdapterPlugin;
