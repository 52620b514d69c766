import { defineAdapter, type SessionAdapterInstance } from "../../core/plugin-api/index.js";
import { loadPty } from "./pty.js";
import { startTerminal } from "./terminal-session.js";

/** Terminal sessions: a command (from a local `terminalPresets` entry or given inline) with its output recorded. */
export default defineAdapter({
  kind: "terminal",
  description: "Terminal sessions from terminalPresets or an inline command (pseudo-terminal when node-pty loads)",
  setup(ctx): SessionAdapterInstance {
    let warned = false;
    return {
      slugs: () => ["terminal"],
      start: async (spec, sink) => {
        const pty = await loadPty();
        if (!pty && ctx.config().features?.pty === true && !warned) {
          warned = true;
          ctx.logger.warn(
            "features.pty is set but the node-pty library is not installed or did not load; terminal sessions run as plain child processes",
          );
        }
        ctx.logger.debug("starting terminal session", { sessionId: spec.sessionId, transport: pty ? "pty" : "pipe" });
        return startTerminal(spec, sink, pty);
      },
    };
  },
});
