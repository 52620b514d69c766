import type { ConfigService } from "../config/config-service.js";
import { SvcError, issuesToDetails } from "../errors.js";
import type { RouteDef, RouteRequest } from "../plugin-api/http.js";
import { followTranscript } from "./follow.js";
import type { SessionMessaging } from "./messaging.js";
import type { SessionResumer } from "./resume.js";
import type { SessionRuntime } from "./runtime.js";
import { promptBody, startBody, terminalBody } from "./schemas.js";
import { findWorkspaceDir, resolvePresetLaunch } from "./terminal-launch.js";
import { readTranscript } from "./transcript-reader.js";
import { conversation, recap, transcriptPaths } from "./views.js";
import type { z } from "zod";
import { presentedSessionToken } from "../workspaces/lineage.js";
import { confineToRoots } from "../daemon/confine-paths.js";

function parse<T extends z.ZodType>(schema: T, req: RouteRequest): z.infer<T> {
  const r = schema.safeParse(req.json());
  if (!r.success)
    throw new SvcError("invalid_input", `invalid request body: ${r.error.issues[0]?.message}`, {
      details: issuesToDetails(r.error.issues),
    });
  return r.data;
}

/**
 * The session routes, guarded as their operations in core/daemon/authorization.ts say: a terminal
 * session (a given command) needs the bearer token; starting, prompting and stopping agent
 * sessions and every read are loopback-or-token, as their MCP tools are.
 * `/conversations*` (same auth as `/mcp`) serves agent sessions in chat form.
 */
export function sessionRoutes(
  runtime: SessionRuntime,
  messaging: SessionMessaging,
  config: ConfigService,
  resumer: SessionResumer,
): RouteDef[] {
  const cfg = () => config.current().effective;
  return [
    {
      method: "POST",
      path: "/sessions",
      auth: "loopback-or-token",
      handler: async (req) => {
        const { wait, parentSessionId, ...b } = parse(startBody, req);
        await confineToRoots(
          req.principal,
          cfg().pairing.allowedRoots ?? [],
          { cwd: b.cwd, worktreeRoot: b.worktreeRoot },
          ["cwd"],
        );
        const { descriptor, result, deduped } = await runtime.start({
          ...b,
          parentId: parentSessionId,
          callerToken: presentedSessionToken(req.headers),
        });
        const turn = wait && result ? await runtime.waitFor(descriptor.id, result.promptId) : undefined;
        const body = {
          descriptor: turn ? runtime.describe(runtime.get(descriptor.id)) : descriptor,
          ...(result ? { receipt: result } : {}),
          ...(turn ? { result: turn } : {}),
          ...(deduped ? { deduped: true } : {}),
        };
        return { status: deduped ? 200 : 201, body };
      },
    },
    {
      method: "POST",
      path: "/sessions/terminal",
      auth: "token",
      handler: async (req) => {
        const b = parse(terminalBody, req);
        const launch = resolvePresetLaunch(cfg().terminalPresets, { preset: b.preset, argv: b.argv, cwd: b.cwd });
        let cwd = launch.cwd;
        if (!cwd && launch.workspace) {
          const root = cfg().worktrees.root;
          cwd = await findWorkspaceDir(root, launch.workspace);
          if (!cwd)
            throw new SvcError(
              "not_found",
              `terminal preset workspace "${launch.workspace}" has no directory under ${root}/<repo>/${launch.workspace}`,
            );
        }
        const { descriptor } = await runtime.start({
          adapter: "terminal",
          cwd,
          argv: launch.argv,
          env: launch.env,
          label: b.label ?? launch.label,
          name: b.name ?? launch.name,
          ...(b.worktreeRoot ? { worktreeRoot: b.worktreeRoot } : {}),
          callerToken: presentedSessionToken(req.headers),
        });
        return { status: 201, body: { descriptor } };
      },
    },
    {
      method: "GET",
      path: "/sessions",
      auth: "loopback-or-token",
      handler: () => ({ status: 200, body: { sessions: runtime.list() } }),
    },
    {
      method: "GET",
      path: "/sessions/:id",
      auth: "loopback-or-token",
      // A session of an earlier daemon life is shown from its record (resume.ts).
      handler: async (req) => {
        const id = req.params.id!;
        return {
          status: 200,
          body: {
            descriptor:
              runtime.state(id) === "unknown" ? await resumer.describeRecorded(id) : runtime.describe(runtime.get(id)),
          },
        };
      },
    },
    {
      method: "POST",
      path: "/sessions/:id/resume",
      auth: "loopback-or-token",
      handler: async (req) => {
        const descriptor = await resumer.resume(req.params.id!, (record) =>
          confineToRoots(req.principal, cfg().pairing.allowedRoots ?? [], { cwd: record.cwd }, ["cwd"]),
        );
        return { status: 200, body: { descriptor } };
      },
    },
    {
      method: "GET",
      path: "/sessions/:id/recap",
      auth: "loopback-or-token",
      handler: async (req) => ({ status: 200, body: await recap(runtime, req.params.id!) }),
    },
    {
      method: "POST",
      path: "/sessions/:id/prompt",
      auth: "loopback-or-token",
      handler: async (req) => {
        const b = parse(promptBody, req);
        const receipt = messaging.prompt(req.params.id!, b.text, { interrupt: b.interrupt });
        const result = b.wait ? await runtime.waitFor(req.params.id!, receipt.promptId) : undefined;
        return { status: 202, body: { receipt, ...(result ? { result } : {}) } };
      },
    },
    {
      method: "POST",
      path: "/sessions/:id/stop",
      auth: "loopback-or-token",
      handler: async (req) => ({ status: 200, body: { descriptor: await runtime.stop(req.params.id!) } }),
    },
    {
      method: "GET",
      path: "/sessions/:id/events",
      auth: "loopback-or-token",
      handler: async (req) => {
        const id = req.params.id!;
        const which = req.query.get("file") === "terminal" ? "terminal" : "events";
        const after = Number(req.query.get("after") ?? 0) || 0;
        const paths = await transcriptPaths(runtime, id);
        const path = which === "terminal" ? paths.terminal : paths.events;
        if (!path) throw new SvcError("not_found", `session ${id} has no terminal transcript`);
        const follow = ["1", "true"].includes(req.query.get("follow") ?? "");
        if (follow && paths.live) {
          await followTranscript(runtime, id, which, after, req.res);
          return undefined;
        }
        const lines = await readTranscript(path, after);
        return {
          status: 200,
          headers: { "content-type": "application/x-ndjson; charset=utf-8" },
          body: lines.map((l) => JSON.stringify(l) + "\n").join(""),
        };
      },
    },
    {
      method: "GET",
      path: "/sessions/:id/export",
      auth: "loopback-or-token",
      handler: async (req) => {
        const id = req.params.id!;
        const paths = await transcriptPaths(runtime, id);
        const descriptor = runtime.state(id) === "unknown" ? undefined : runtime.describe(runtime.get(id));
        return {
          status: 200,
          body: {
            id,
            ...(descriptor ? { descriptor } : {}),
            eventsPath: paths.events,
            events: await readTranscript(paths.events),
            ...(paths.terminal ? { terminal: await readTranscript(paths.terminal) } : {}),
          },
        };
      },
    },
    {
      method: "GET",
      path: "/conversations",
      auth: "loopback-or-token",
      handler: () => ({
        status: 200,
        body: {
          conversations: runtime
            .list()
            .filter((d) => d.kind === "agent")
            .map((d) => ({
              id: d.id,
              adapter: d.adapter,
              label: d.label,
              state: d.state,
              activity: d.activity,
              turns: d.turns,
              lastActivityAt: d.lastActivityAt,
            })),
        },
      }),
    },
    {
      method: "GET",
      path: "/conversations/:id",
      auth: "loopback-or-token",
      handler: async (req) => {
        const paths = await transcriptPaths(runtime, req.params.id!);
        return { status: 200, body: { id: req.params.id, messages: conversation(await readTranscript(paths.events)) } };
      },
    },
  ];
}
