import { configModule } from "../config/module.js";
import { storeModule } from "../store/module.js";
import { leadershipModule } from "../store/leadership-module.js";
import { egressModule } from "../egress/module.js";
import { coreRoutesModule } from "./core-routes.js";
import { resourceMetadataModule } from "./resource-metadata.js";
import { pluginHostModule } from "../plugin-host/module.js";
import { eventsModule } from "./events-module.js";
import { mcpModule } from "./mcp-module.js";
import { sessionsModule } from "../sessions/module.js";
import { swarmModule } from "../swarm/module.js";
import { sentinelsModule } from "../sentinels/module.js";
import { sentinelToolsModule } from "../sentinels/tools.js";
import { eventCatalogModule } from "../mcp-events/catalog-module.js";
import { mcpEventsModule } from "../mcp-events/module.js";
import { remoteModule } from "../remote/module.js";
import { statusModule } from "./status-module.js";
import { dashboardModule } from "../dashboard/module.js";
import { llmEndpointModule } from "../llm-endpoint/module.js";
import { redactionModule } from "../redaction/module.js";
import { tracingModule } from "../tracing/module.js";
import { stewardModule } from "../steward/module.js";
import type { DaemonModule } from "./module.js";

/** The daemon's modules, in start order. */
export const DAEMON_MODULES: DaemonModule[] = [
  configModule,
  // the store (files, or the team's PostgreSQL) before everything that keeps records: it stops last
  storeModule,
  // after the store (STORE): roles one daemon of the team holds; stops after the plugins that hold them
  leadershipModule,
  coreRoutesModule,
  resourceMetadataModule,
  // before the plugin host, so it stops after the targets that post through it
  egressModule,
  // plugins load before every module that uses them (after the config module, when there is one)
  pluginHostModule,
  sessionsModule,
  // after the plugin host and sessions (redactor plugins, session workspaces), before what redacts (steward, tracing)
  redactionModule,
  // after sessions: it stops first, so its runs end before the session runtime stops
  swarmModule,
  sentinelsModule,
  sentinelToolsModule,
  // after sentinels: the MCP event types of the loaded providers (EVENT_CATALOG), read through the engine's plugin access
  eventCatalogModule,
  // after sentinels, sessions and the catalog: MCP webhook subscriptions are sentinels, session tokens name callers
  mcpEventsModule,
  // after sessions: it hands sessions their model environment; loads nothing while features.llmEndpoint is off
  llmEndpointModule,
  // after sessions: it opens traced sessions' spans; loads no SDK until a session is traced
  tracingModule,
  // after sessions and the llm-endpoint: it judges sessions, through the sidecar when it runs
  stewardModule,
  // the page under /ui/, its login, and the read routes its views add (worktrees, adapters)
  dashboardModule,
  // pairings and the tunnel forward into the routes above
  remoteModule,
  // after every module whose state it shows (GET /status)
  statusModule,
  // keep last: they serve what the modules above register
  eventsModule,
  mcpModule,
];
