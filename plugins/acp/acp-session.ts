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
import { authMethodFor, listMethods, type AdvertisedAuthMethod } from "./authentication.js";
import { chooseModel, spawnModel } from "./model-choice.js";
import { expandRecipeEnv } from "./recipe-env.js";
import { agentRefused, rpcErrorOf } from "./start-error.js";

const HANDSHAKE_TIMEOUT_MS = 30_000;

/**
 * Spawns an ACP agent over stdio and drives it with the SDK's client side: initialize,
 * authenticate (when a method fits, {@link authMethodFor}), new session (options and skills ride
 * in `_meta.svc`), the requested model ({@link chooseModel}), prompt, streamed updates, cancel,
 * and the client's `fs/read_text_file` and `fs/write_text_file` within the session's cwd
 * ({@link ClientFs}), as far as the recipe's `clientCapabilities` offer them. A start the agent
 * refuses fails with the agent's own error ({@link agentRefused}).
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
  const model = typeof spec.options.model === "string" ? spec.options.model : undefined;
  const byRecipe = spawnModel(recipe, model);
  const env = agentEnv(spec, recipe, byRecipe.env);
  const args = [...(recipe.bin_args ?? []), ...byRecipe.args];
  const child = spawn(recipe.bin, args, { cwd: spec.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  const secrets = sessionSecrets(spec.auth, env);
  const stderrTail = new StderrTail(secrets);
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
      sink.update("permission_decision", {
        toolCallId: req.toolCall?.toolCallId,
        ...(pick ? { optionId: pick.optionId, kind: pick.kind, name: pick.name } : { outcome: "cancelled" }),
      });
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
  /** The request in flight, for a refusal's message. */
  let step = "initialize";
  let authMethods: AdvertisedAuthMethod[] | undefined;
  try {
    const fs = recipe.clientCapabilities?.fs;
    const init = await guard(
      conn.initialize({
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: fs?.readTextFile ?? true, writeTextFile: fs?.writeTextFile ?? true },
          terminal: false,
        },
      }),
      step,
    );
    agentInfo = {
      protocolVersion: init.protocolVersion,
      ...(init.agentInfo ? { agent: init.agentInfo } : {}),
      source: resolved.source,
      bin: recipe.bin,
    };
    if (recipe.modelProxy?.supported === false) agentInfo.modelProxy = { proxied: false, why: recipe.modelProxy.why };
    authMethods = init.authMethods as AdvertisedAuthMethod[] | undefined;
    const methodId = authMethodFor(spec.adapter, authMethods, recipe, holdsKey(spec, recipe, env));
    if (methodId !== undefined) {
      step = `authenticate (method ${methodId})`;
      await guard(conn.authenticate({ methodId }), step);
      agentInfo.authMethod = methodId;
    }
    const _meta = { svc: { sessionId: spec.sessionId, options: spec.options, skills: spec.skills } };
    if (load === undefined) {
      step = "session/new";
      const answer = await guard(conn.newSession({ cwd: spec.cwd, mcpServers: [], _meta }), step);
      sessionId = answer.sessionId;
      const id = sessionId;
      step = "the model choice";
      const choice = await chooseModel(answer, model, recipe, {
        setConfigOption: (configId, value) =>
          guard(conn.setSessionConfigOption({ sessionId: id, configId, value }), "session/set_config_option"),
        setModel: (modelId) =>
          guard(conn.extMethod("session/set_model", { sessionId: id, modelId }), "session/set_model"),
      });
      if (choice) agentInfo.model = choice;
    } else {
      if (init.agentCapabilities?.loadSession !== true) {
        throw new SvcError(
          "not_resumable",
          `ACP agent "${spec.adapter}" (${recipe.bin}) does not advertise session loading (its initialize answer has no agentCapabilities.loadSession: true), so its sessions cannot be resumed`,
        );
      }
      sessionId = load;
      replaying = true;
      step = "session/load";
      try {
        await guard(conn.loadSession({ sessionId: load, cwd: spec.cwd, mcpServers: [], _meta }), step);
      } finally {
        replaying = false;
      }
      agentInfo = { ...agentInfo, loaded: true, replayedUpdates: replayed };
    }
  } catch (err) {
    const rpc = rpcErrorOf(err);
    const ours = SvcError.is(err) && err.code !== "unavailable" ? err : undefined;
    const refused = rpc
      ? agentRefused(spec.adapter, step, rpc, {
          recipe,
          stderr: stderrTail.lines(3),
          secrets,
          authMethods: listMethods(authMethods),
        })
      : SvcError.is(err) && !exitedAlready(child)
        ? err
        : undefined;
    if (ours ?? refused) failure = (ours ?? refused)!.message;
    if (ours?.code === "timeout") child.kill("SIGKILL");
    // An agent that answered is asked to end, as a stop would (SIGTERM, then SIGKILL after the grace).
    else void terminateAndWait((sig) => child.kill(sig), exited);
    // As in a turn: the connection closes a moment before the exit (and its stderr) is reported.
    await Promise.race([died, new Promise((r) => setTimeout(r, 1000).unref())]).catch((exit: Error) => {
      throw ours ?? refused ?? exit;
    });
    throw ours ?? refused ?? err;
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

/** Whether svc holds a key for the agent: in its auth, or in the variable its recipe reads it from. */
function holdsKey(spec: SessionStartSpec, recipe: AcpRecipe, env: NodeJS.ProcessEnv): boolean {
  return Boolean(spec.auth?.apiKey ?? spec.auth?.token ?? (recipe.apiKeyEnv ? env[recipe.apiKeyEnv] : undefined));
}

function exitedAlready(child: { exitCode: number | null; signalCode: string | null }): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * The agent's environment: the daemon's, the recipe's `env` (its `${NAME}` references expanded,
 * {@link expandRecipeEnv}), the runtime's (the session token), the model the recipe's
 * `selectModel.env` carries, the session id, its auth, and the shim first on PATH.
 */
function agentEnv(spec: SessionStartSpec, recipe: AcpRecipe, model: Record<string, string>): NodeJS.ProcessEnv {
  const merged = { ...process.env, ...recipe.env, ...spec.env, ...model, SVC_SESSION_ID: spec.sessionId };
  const env: NodeJS.ProcessEnv = prependPath(expandRecipeEnv(recipe.env, merged, process.env), spec.pathPrepend);
  const secret = spec.auth?.apiKey ?? spec.auth?.token;
  if (secret) env[recipe.apiKeyEnv ?? "SVC_ADAPTER_API_KEY"] = secret;
  if (spec.auth?.mode) env.SVC_ADAPTER_AUTH_MODE = spec.auth.mode;
  return env;
}
