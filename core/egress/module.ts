/**
 * The egress gate's daemon module: builds the host egress at start (logging, once, the
 * `webhooks.allowSubnets` warnings), rebuilds it when a config reload changes the list, and
 * closes it at stop (after the plugin host has stopped the targets that use it).
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { CONFIG, EGRESS, resolve } from "../tokens.js";

/** How long stop waits for requests still in flight on the egress client. */
const CLOSE_GRACE_MS = 2_000;

const unsubscribers = new WeakMap<DependencyContainer, () => void>();

export const egressModule: DaemonModule = {
  name: "egress",
  async start(c: DependencyContainer) {
    const egress = resolve(c, EGRESS);
    egress.refresh();
    unsubscribers.set(
      c,
      resolve(c, CONFIG).onChange(() => egress.refresh()),
    );
  },
  async stop(c: DependencyContainer) {
    unsubscribers.get(c)?.();
    unsubscribers.delete(c);
    const closed = resolve(c, EGRESS)
      .close()
      .catch(() => undefined);
    await Promise.race([closed, new Promise((r) => setTimeout(r, CLOSE_GRACE_MS).unref())]);
  },
};
