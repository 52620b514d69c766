/**
 * Tracing in the daemon (docs/tracing.md): the gate (gate.ts) joins the session runtime, the MCP
 * tool calls and the steward's verdicts on the event bus. While no session is traced it is all
 * that loads; the OpenTelemetry SDK loads with the first traced session. At stop, what is queued
 * is sent within {@link SHUTDOWN_TIMEOUT_MS}.
 */
import type { DependencyContainer } from "tsyringe";
import { MCP_CALL_TRACE } from "../daemon/mcp/call-trace.js";
import type { DaemonModule } from "../daemon/module.js";
import { REDACTION } from "../redaction/redaction.js";
import { registerValue } from "../runtime/inject.js";
import { SESSIONS } from "../sessions/runtime.js";
import { CLOCK, CONFIG, DAEMON_EVENTS, ENV, LOGGER, resolve } from "../tokens.js";
import { TracingGate } from "./gate.js";

export const SHUTDOWN_TIMEOUT_MS = 5000;

const held = new WeakMap<DependencyContainer, { gate: TracingGate; unsubscribe: () => void }>();

export const tracingModule: DaemonModule = {
  name: "tracing",
  async start(c: DependencyContainer) {
    const sessions = resolve(c, SESSIONS);
    const clock = resolve(c, CLOCK);
    const gate = new TracingGate({
      config: resolve(c, CONFIG),
      env: resolve(c, ENV),
      logger: resolve(c, LOGGER).child({ module: "tracing" }),
      redaction: resolve(c, REDACTION),
      sessionOf: (token) => sessions.workspaces.tokens.sessionOf(token),
      now: () => clock.now(),
    });
    sessions.useTracing(gate);
    registerValue(c, MCP_CALL_TRACE, gate);
    const unsubscribe = resolve(c, DAEMON_EVENTS).subscribe((e) => {
      if (e.type === "session:verdict") gate.verdict(e.data);
    });
    held.set(c, { gate, unsubscribe });
  },
  async stop(c: DependencyContainer) {
    const h = held.get(c);
    held.delete(c);
    if (!h) return;
    h.unsubscribe();
    resolve(c, SESSIONS).useTracing(undefined);
    await h.gate.shutdown(SHUTDOWN_TIMEOUT_MS);
  },
};
