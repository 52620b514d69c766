/**
 * The llm-endpoint's routes (`/llm-endpoint/...`) and MCP tools (`llm_endpoint_*`): status and
 * usage read (operation `llm.read`); start and stop need the daemon's token (`llm.control`), since
 * a stopped sidecar lets the next sessions call their providers with the keys themselves.
 */
import { z } from "zod";
import type { RouteDef } from "../plugin-api/http.js";
import type { ToolDef } from "../plugin-api/tools.js";
import type { LlmEndpointService } from "./service.js";

const filter = {
  sessionId: z.string().min(1).optional().describe("Only this session (ses_…)"),
  runId: z.string().min(1).optional().describe("Only this swarm run"),
};

const loose = (what: string) => z.looseObject({}).describe(what);

/** Starts or stops the sidecar, then answers its status. */
async function control(service: LlmEndpointService, verb: "start" | "stop") {
  await (verb === "start" ? service.start() : service.stop());
  return service.status();
}

export function llmEndpointRoutes(service: LlmEndpointService): RouteDef[] {
  return [
    {
      method: "GET",
      path: "/llm-endpoint/status",
      auth: "loopback-or-token",
      handler: () => ({ status: 200, body: service.status() }),
    },
    {
      method: "GET",
      path: "/llm-endpoint/usage",
      auth: "loopback-or-token",
      handler: (req) => {
        const sessionId = req.query.get("sessionId") || undefined;
        const runId = req.query.get("runId") || undefined;
        return {
          status: 200,
          body: service.usage({ ...(sessionId ? { sessionId } : {}), ...(runId ? { runId } : {}) }),
        };
      },
    },
    ...(["start", "stop"] as const).map(
      (verb): RouteDef => ({
        method: "POST",
        path: `/llm-endpoint/${verb}`,
        auth: "token",
        handler: async () => ({ status: 200, body: await control(service, verb) }),
      }),
    ),
  ];
}

export function llmEndpointTools(service: LlmEndpointService): ToolDef[] {
  const status = {
    enabled: z.boolean().describe("Whether the sidecar is meant to run"),
    sidecar: loose("state, pid, port, restarts, since, lastExit, lastError"),
    url: z.string().optional().describe("The sidecar's base URL"),
    routes: z
      .array(loose("A route: name, provider, baseUrl, models, key (where its key comes from, never the key)"))
      .describe("The routes"),
    sessions: z.number().describe("Sessions holding a token now"),
    notProxied: z
      .array(loose("A live session whose agent the sidecar cannot serve: sessionId, adapter, why"))
      .describe("Live sessions whose agent does not take the sidecar's base URLs and token"),
  };
  return [
    {
      name: "llm_endpoint_status",
      description:
        "The llm-endpoint sidecar: state, port and URL, restarts, last exit, routes (where each key comes from, never the key) and how many sessions hold a token.",
      inputSchema: {},
      outputSchema: status,
      readOnly: true,
      handler: () => service.status(),
    },
    {
      name: "llm_endpoint_usage",
      description:
        "Model calls through the sidecar: today's totals (UTC), and per session and per swarm run since the daemon started (calls, input and output tokens, refused).",
      inputSchema: filter,
      outputSchema: {
        day: loose("Today's totals"),
        sessions: z.record(z.string(), loose("totals")).describe("Per session"),
        runs: z.record(z.string(), loose("totals")).describe("Per swarm run"),
      },
      readOnly: true,
      handler: (i: { sessionId?: string; runId?: string }) => service.usage(i),
    } satisfies ToolDef<typeof filter>,
    ...(["start", "stop"] as const).map(
      (verb): ToolDef => ({
        name: `llm_endpoint_${verb}`,
        description:
          verb === "start"
            ? "Start the llm-endpoint sidecar (features.llmEndpoint must be on); sessions started from then on call their models through it."
            : "Stop the llm-endpoint sidecar until started again or the daemon restarts; sessions started meanwhile call their providers directly.",
        inputSchema: {},
        outputSchema: status,
        requires: "token",
        handler: () => control(service, verb),
      }),
    ),
  ];
}
