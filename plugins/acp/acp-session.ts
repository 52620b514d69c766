import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import {
  ClientSideConnection,
  ndJsonStream,
  PROTOCOL_VERSION,
  type Client,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import {
  prependPath,
  SvcError,
  terminateAndWait,
  type AdapterSession,
  type SessionResumeSpec,
  type SessionStartSpec,
  type SessionUpdateSink,
} from "../../core/plugin-api/index.js";
import type { AcpRecipe } from "../../core/plugin-api/index.js";
import type { ResolvedRecipe } from "./recipes.js";
import { ClientFs, type ClientFsOptions } from "./client-fs.js";
import { sessionSecrets, StderrTail } from "./stderr-tail.js";

const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * Spawns an ACP agent over stdio and drives it with the SDK's client side: initialize, new
 * session (options and skills ride in `_meta.svc`), prompt, streamed updates, cancel, and the
 * client's `fs/read_text_file` and `fs/write_text_file` within the session's cwd ({@link ClientFs}).
 * `dirs` bound the client's file access: `$SVC_HOME` (never, but for `worktrees.root` inside it) and
 * `sessions.eventsDir` (never).
 *
 * With `spec.agentSessionId` (a resume) the agent must advertise `agentCapabilities.loadSession`
 * (else `not_resumable`) and gets `session/load` instead of `session/new`; the history it replays
 * while loading is counted (`info.replayedUpdates`), not reported to `sink`.
 */
export async function startAcpSession(
  spec: SessionStartSpec | SessionResumeSpec,
  resolved: ResolvedRecipe,
  sink: SessionUpdateSink,
  dirs: Pick<ClientFsOptions, "svcHome" | "worktreesRoot" | "eventsDir">,
): Promise<AdapterSession> {
  const load = "agentSessionId" in spec ? spec.agentSessionId : undefined;
  const { recipe } = resolved;
  const env = agentEnv(spec, recipe);
  const child = spawn(recipe.bin, recipe.bin_args ?? [], { cwd: spec.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const stderrTail = new StderrTail(sessionSecrets(spec.auth, env));
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => stderrTail.push(d));
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "ENOENT"
          ? new SvcError(
              "unavailable",
              `ACP agent "${spec.adapter}": ${recipe.bin} is not on PATH${recipe.install_hint ? `; install it: ${recipe.install_hint}` : ""}`,
            )
          : new SvcError("unavailable", `ACP agent "${spec.adapter}": could not start ${recipe.bin}: ${err.message}`),
      ),
    );
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  await spawned;

  let sessionId: string | undefined;
  /** The slash commands the agent advertised last (ACP `available_commands_update`). */
  let commands: string[] = [];
  /** While `session/load` runs: the agent replays history the transcript already has. */
  let replaying = false;
  let replayed = 0;
  /** Why the handshake failed, for the exit report of the process it then kills. */
  let failure: string | undefined;
  const clientFs = new ClientFs({
    cwd: spec.cwd,
    ...dirs,
    isSession: (id) => sessionId !== undefined && id === sessionId,
    record: (kind, data) => sink.update(kind, data),
  });
  const client: Client = {
    sessionUpdate: async (n: SessionNotification) => {
      const update = n.update as {
        sessionUpdate: string;
        _meta?: { svc?: { quota?: { profile: string; remaining: number; window: string } } };
      };
      if (update.sessionUpdate === "available_commands_update") commands = advertised(update);
      if (replaying) {
        replayed++;
        return;
      }
      sink.update(update.sessionUpdate, update);
      const quota = update._meta?.svc?.quota;
      if (quota && typeof quota.remaining === "number") sink.quota(quota);
    },
    requestPermission: async (req: RequestPermissionRequest): Promise<RequestPermissionResponse> => {
      sink.update("permission_request", { toolCall: req.toolCall, options: req.options });
      const pick =
        req.options.find((o) => o.kind === "allow_once") ??
        req.options.find((o) => o.kind === "allow_always") ??
        req.options[0];
      return pick
        ? { outcome: { outcome: "selected", optionId: pick.optionId } }
        : { outcome: { outcome: "cancelled" } };
    },
    readTextFile: (req) => clientFs.readTextFile(req),
    writeTextFile: (req) => clientFs.writeTextFile(req),
  };
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const conn = new ClientSideConnection(() => client, stream);
  const died = exited.then(({ code, signal }) => {
    const tail = stderrTail.lines(3);
    const error =
      failure ??
      (code === 0
        ? undefined
        : `ACP agent "${spec.adapter}" exited (code ${code}, signal ${signal})${tail ? `: ${tail}` : ""}`);
    sink.exited({ code, signal, ...(error ? { error } : {}) });
    throw new SvcError("unavailable", error ?? `ACP agent "${spec.adapter}" exited`);
  });
  died.catch(() => undefined);
  const guard = <T>(p: Promise<T>, what: string): Promise<T> =>
    Promise.race([
      p,
      died,
      new Promise<never>((_, reject) =>
        setTimeout(
          () =>
            reject(
              new SvcError(
                "timeout",
                `ACP agent "${spec.adapter}" did not answer ${what} within ${HANDSHAKE_TIMEOUT_MS / 1000}s`,
              ),
            ),
          HANDSHAKE_TIMEOUT_MS,
        ).unref(),
      ),
    ]);

  let agentInfo: Record<string, unknown>;
  try {
    const init = await guard(
      conn.initialize({
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      }),
      "initialize",
    );
    agentInfo = {
      protocolVersion: init.protocolVersion,
      ...(init.agentInfo ? { agent: init.agentInfo } : {}),
      source: resolved.source,
      bin: recipe.bin,
    };
    const _meta = { svc: { sessionId: spec.sessionId, options: spec.options, skills: spec.skills } };
    if (load === undefined) {
      sessionId = (await guard(conn.newSession({ cwd: spec.cwd, mcpServers: [], _meta }), "session/new")).sessionId;
    } else {
      if (init.agentCapabilities?.loadSession !== true) {
        throw new SvcError(
          "not_resumable",
          `ACP agent "${spec.adapter}" (${recipe.bin}) does not advertise session loading (its initialize answer has no agentCapabilities.loadSession: true), so its sessions cannot be resumed`,
        );
      }
      sessionId = load;
      replaying = true;
      try {
        await guard(conn.loadSession({ sessionId: load, cwd: spec.cwd, mcpServers: [], _meta }), "session/load");
      } finally {
        replaying = false;
      }
      agentInfo = { ...agentInfo, loaded: true, replayedUpdates: replayed };
    }
  } catch (err) {
    const ours = err instanceof SvcError && (err.code === "timeout" || err.code === "not_resumable");
    if (ours) failure = err.message;
    child.kill("SIGKILL");
    // As in a turn: the connection closes a moment before the exit (and its stderr) is reported.
    await Promise.race([died, new Promise((r) => setTimeout(r, 1000).unref())]).catch((exit: Error) => {
      throw ours ? err : exit;
    });
    throw err;
  }

  const acpSessionId = sessionId;
  return {
    kind: "agent",
    pid: child.pid,
    info: agentInfo,
    agentSessionId: acpSessionId,
    prompt: async (text) => {
      try {
        const res = await Promise.race([
          conn.prompt({ sessionId: acpSessionId, prompt: [{ type: "text", text }] }),
          died,
        ]);
        return { stopReason: res.stopReason };
      } catch (err) {
        // The connection closes a moment before the exit is reported: prefer the exit's account.
        await Promise.race([died, new Promise((r) => setTimeout(r, 1000).unref())]);
        throw err;
      }
    },
    cancel: () => conn.cancel({ sessionId: acpSessionId }),
    compactCommand: () => (commands.includes("compact") ? "/compact" : undefined),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // The agent alone (it is not spawned detached): its own children are its to end.
      await terminateAndWait((sig) => child.kill(sig), exited);
    },
  };
}

/** The command names of an `available_commands_update` (without their `/`). */
function advertised(update: unknown): string[] {
  const list = (update as { availableCommands?: unknown }).availableCommands;
  return Array.isArray(list)
    ? list
        .map((c) => (c as { name?: unknown })?.name)
        .filter((n): n is string => typeof n === "string")
        .map((n) => n.replace(/^\//, ""))
    : [];
}

/** The agent's environment: the daemon's, the recipe's `env`, the runtime's (the session token), the session id, its auth, and the shim first on PATH. */
function agentEnv(spec: SessionStartSpec, recipe: AcpRecipe): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = prependPath(
    { ...process.env, ...recipe.env, ...spec.env, SVC_SESSION_ID: spec.sessionId },
    spec.pathPrepend,
  );
  const secret = spec.auth?.apiKey ?? spec.auth?.token;
  if (secret) env[recipe.apiKeyEnv ?? "SVC_ADAPTER_API_KEY"] = secret;
  if (spec.auth?.mode) env.SVC_ADAPTER_AUTH_MODE = spec.auth.mode;
  return env;
}
