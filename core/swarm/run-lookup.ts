import type { DependencyContainer } from "tsyringe";
import { pluginInstance } from "../plugin-host/context.js";
import { registerValue } from "../runtime/inject.js";
import type { AdapterLookup } from "../sessions/adapter-lookup.js";
import { PLUGINS, resolve } from "../tokens.js";
import type { AdapterWalk } from "./adapter-walk.js";

/**
 * The lookup the run's sessions start through: the run's registry; a plugin loaded from the same
 * package directory as the daemon's shares the daemon's set-up instance, any other is set up for
 * this run (with the same context and setup timeout as at daemon start).
 */
export function runAdapterLookup(c: DependencyContainer, walk: AdapterWalk): AdapterLookup {
  const runScope = c.createChildContainer();
  registerValue(runScope, PLUGINS, walk.registry);
  const daemon = resolve(c, PLUGINS);
  return {
    find: (kind) => {
      const p = walk.registry.get("adapter", kind);
      return p ? { builtin: p.source.builtin } : undefined;
    },
    instance: async (kind) => {
      const ours = walk.registry.get("adapter", kind);
      const theirs = daemon.get("adapter", kind);
      const same =
        ours &&
        theirs &&
        ours.source.dir === theirs.source.dir &&
        ours.source.version === theirs.source.version &&
        ours.definition === theirs.definition;
      return (await pluginInstance(same ? c : runScope, "adapter", kind)) as Awaited<
        ReturnType<AdapterLookup["instance"]>
      >;
    },
  };
}
