/**
 * The llm-endpoint sidecar: a child the daemon forks with an IPC channel. It learns everything
 * (routes, keys, budgets, tokens) from the daemon's messages, binds loopback when told, proxies
 * model calls and reports each one. It exits as soon as the channel closes: it never outlives the
 * daemon.
 */
import type { ChildMessage, ParentMessage } from "../protocol.js";
import { createSidecarServer } from "./server.js";
import { SidecarState } from "./state.js";

if (!process.send) {
  process.stderr.write(
    "svc llm-endpoint sidecar: the daemon starts this process (features.llmEndpoint); it does not run by hand\n",
  );
  process.exit(2);
}

const send = (m: ChildMessage): void => {
  if (process.connected) process.send!(m);
};
const state = new SidecarState();
const server = createSidecarServer(state, send);
let listenAsked = false;

process.on("disconnect", () => process.exit(0));

process.on("message", (m: ParentMessage) => {
  switch (m.type) {
    case "configure":
      state.configure(m);
      return;
    case "listen":
      if (listenAsked) return;
      listenAsked = true;
      server.once("error", (err: NodeJS.ErrnoException) =>
        send({ type: "listen-failed", port: m.port, code: err.code ?? "ERROR", message: err.message }),
      );
      server.listen(m.port, "127.0.0.1", () => {
        const addr = server.address();
        send({ type: "listening", port: typeof addr === "object" && addr ? addr.port : m.port, pid: process.pid });
      });
      return;
    case "grant":
      state.grants.grant(
        m.token,
        m.runId !== undefined ? { sessionId: m.sessionId, runId: m.runId } : { sessionId: m.sessionId },
      );
      state.limits.seed(m.sessionId, m.runId, m.used);
      return;
    case "revoke": {
      const gone = state.grants.revoke(m.token);
      if (gone !== undefined) state.limits.forget(gone);
      return;
    }
    case "block":
      state.grants.block(m.sessionId, m.reason);
      return;
    case "stats":
      send({
        type: "stats",
        id: m.id,
        inFlight: state.limits.inFlight,
        calls: state.calls,
        rssBytes: process.memoryUsage().rss,
      });
      return;
  }
});
