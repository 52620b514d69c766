import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import type { PluginContext } from "../plugin-api/context.js";
import { CLOCK, CONFIG, HOME, LOGGER, PLUGINS, RANDOM, SERVICES, SLEEP, resolve } from "../tokens.js";
import { FILES } from "../storage/paths.js";
import { SvcError } from "../errors.js";
import { instanceProblem } from "./load.js";
import type { LoadedPlugin } from "./registry.js";

/** Builds the context a plugin receives at setup: everything it may use, nothing of the container. */
export function makePluginContext(c: DependencyContainer, plugin: LoadedPlugin): PluginContext {
  const home = resolve(c, HOME);
  const services = resolve(c, SERVICES);
  const config = resolve(c, CONFIG);
  return {
    // Only plugins with a setup get a context; a redactor is a pure function and never does.
    type: plugin.type as PluginContext["type"],
    kind: plugin.kind,
    logger: resolve(c, LOGGER).child({ plugin: `${plugin.type}:${plugin.kind}` }),
    clock: resolve(c, CLOCK),
    random: resolve(c, RANDOM),
    sleep: resolve(c, SLEEP),
    home,
    storageDir: join(home, FILES.plugins, `${plugin.type}-${plugin.kind}`),
    config: () => config.current().effective,
    service: (name) => services.get(name),
    hasService: (name) => services.has(name),
  };
}

/** How long a plugin's setup may take before it counts as failed. */
export const PLUGIN_SETUP_TIMEOUT_MS = 10_000;

/**
 * Sets up (once) and returns the instance of a loaded plugin. A setup that throws or takes longer
 * than {@link PLUGIN_SETUP_TIMEOUT_MS} is recorded in `registry.failures` (phase `setup`) and logged
 * once per failure episode (until a setup succeeds), and rejects with the cause; uses within
 * `SETUP_RETRY_AFTER_MS` (registry.ts) of the failure get the same rejection without running setup again.
 */
export function pluginInstance<T extends LoadedPlugin["type"]>(
  c: DependencyContainer,
  type: T,
  kind: string,
  timeoutMs = PLUGIN_SETUP_TIMEOUT_MS,
) {
  const registry = resolve(c, PLUGINS);
  const clock = resolve(c, CLOCK);
  return registry.instance(
    type,
    kind,
    async (plugin, { retry }) => {
      const ctx = makePluginContext(c, plugin);
      const abort = new AbortController();
      const timedOut = resolve(c, SLEEP)(timeoutMs, abort.signal).then(() => {
        throw new SvcError(
          "timeout",
          `setup of ${type} plugin "${kind}" (package ${plugin.source.package}) did not finish within ${timeoutMs} ms`,
        );
      });
      try {
        const instance = await Promise.race([
          Promise.resolve().then(() => (plugin.definition as { setup(ctx: PluginContext): unknown }).setup(ctx)),
          timedOut,
        ]);
        const problem = instanceProblem(instance, type, kind);
        if (problem) throw new SvcError("plugin_load_failed", `${problem} (package ${plugin.source.package})`);
        return instance;
      } catch (err) {
        const failure = {
          package: plugin.source.package,
          phase: "setup" as const,
          error: `${type} ${kind}: ${(err as Error).message}`,
        };
        if (!retry) {
          registry.fail(failure);
          ctx.logger.warn(`adapter package ${failure.package} failed (setup): ${failure.error}`, {
            package: failure.package,
            phase: "setup",
          });
        }
        // Every surface that needed the plugin answers the same: which package, which phase, the
        // cause and what to do (not a bare 500).
        throw new SvcError(
          "plugin_load_failed",
          setupFailureMessage(type, kind, plugin.source.package, (err as Error).message),
          { cause: err },
        );
      } finally {
        abort.abort();
        timedOut.catch(() => undefined);
      }
    },
    () => clock.now(),
  );
}

/** The message of a failed setup, naming the package, the phase and the fix. */
export function setupFailureMessage(type: string, kind: string, pkg: string, cause: string): string {
  const fix = pkg.startsWith("svc (built-in")
    ? "check the daemon log; a built-in that fails to set up is a bug worth reporting"
    : `fix its configuration (a provider's settings: svc sentinel providers setup <provider>, or the MCP tool setup_sentinel_provider), upgrade it, or remove it with svc adapters rm ${pkg}; svc adapters ls --load shows the load report`;
  return `${type} plugin "${kind}" from package ${pkg} failed to set up (phase setup): ${cause}; ${fix}`;
}
