/**
 * The bench suites, in run order. To add one: write suites/<name>.ts exporting a BenchSuite
 * (`{name, run(): Promise<BenchLine[]>}`, each line with a baseline measured in the same run)
 * and add one line here. `npm run bench -- <name>` runs only the named suites.
 */
import type { BenchSuite } from "../types.js";
import { coldStart } from "./cold-start.js";
import { cli } from "./cli.js";
import { config } from "./config.js";
import { sessions } from "./sessions.js";
import { sentinels } from "./sentinels.js";
import { swarm } from "./swarm.js";
import { webhook } from "./webhook.js";
import { workspacesSuite } from "./workspaces.js";
import { remote } from "./remote.js";
import { llmEndpoint } from "./llm-endpoint.js";
import { tracing } from "./tracing.js";
import { steward } from "./steward.js";
import { mcpEvents } from "./mcp-events.js";
import { dashboard } from "./dashboard.js";
import { memory } from "./memory.js";
import { memoryLoad } from "./memory-load.js";
import { peer } from "./peer.js";
import { team } from "./team.js";

export const SUITES: BenchSuite[] = [
  coldStart,
  cli,
  config,
  sessions,
  swarm,
  sentinels,
  webhook,
  workspacesSuite,
  remote,
  llmEndpoint,
  tracing,
  steward,
  mcpEvents,
  dashboard,
  memory,
  memoryLoad,
  peer,
  team,
];
