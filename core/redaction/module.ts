/**
 * Registers the daemon's {@link RedactionService} (`REDACTION`) and the secrets svc holds itself
 * as sources of the floor: the config's secret paths, credentials.json and the daemon's
 * secret-named environment variables. A few closures: nothing is read until a redaction is made.
 */
import { homedir } from "node:os";
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { SvcError } from "../errors.js";
import type { RedactorPlugin } from "../plugin-api/redactor.js";
import { loadFailureMessage } from "../plugin-host/failure-message.js";
import { currentPlugin } from "../plugin-host/lookup.js";
import { registerValue } from "../runtime/inject.js";
import { SESSIONS } from "../sessions/runtime.js";
import { homeFile } from "../storage/paths.js";
import { CONFIG, ENV, HOME, LOGGER, PLUGINS, resolve } from "../tokens.js";
import { HELD_SECRETS, configSecretValues, credentialValues, envSecretValues } from "./held-secrets.js";
import { REDACTION } from "./redaction.js";
import { DaemonRedactionService } from "./service.js";

const removers = new WeakMap<DependencyContainer, Array<() => void>>();

/** The `redactor` plugin of `slug` from the daemon's registry, packages installed since start included. */
async function redactorPlugin(c: DependencyContainer, slug: string): Promise<RedactorPlugin> {
  const plugin = await currentPlugin(c, "redactor", slug);
  if (plugin) return plugin.definition as RedactorPlugin;
  const registry = resolve(c, PLUGINS);
  const failure = registry.failureOf("redactor", slug);
  if (failure) throw new SvcError("plugin_load_failed", loadFailureMessage("redactor", slug, failure));
  throw new SvcError(
    "not_found",
    `no redactor "${slug}": not a built-in (secrets, paths, metadata) and no installed package provides one; loaded redactor plugins: ${registry.kinds("redactor").join(", ") || "(none)"}`,
  );
}

export const redactionModule: DaemonModule = {
  name: "redaction",
  async start(c: DependencyContainer) {
    const held = resolve(c, HELD_SECRETS);
    const config = resolve(c, CONFIG);
    const env = resolve(c, ENV);
    const home = resolve(c, HOME);
    removers.set(c, [
      held.add({ name: "config", values: () => configSecretValues(config.current().effective) }),
      held.add({ name: "credentials.json", values: () => credentialValues(homeFile(home, "credentials")) }),
      held.add({ name: "daemon environment", values: () => envSecretValues(env) }),
    ]);
    const sessions = () => (c.isRegistered(SESSIONS as never, true) ? resolve(c, SESSIONS) : undefined);
    registerValue(
      c,
      REDACTION,
      new DaemonRedactionService({
        held: () => held.values(),
        paths: {
          home: env.HOME ?? homedir(),
          svcHome: home,
          workspaceOf: (id) => {
            const runtime = sessions();
            if (!runtime || runtime.state(id) === "unknown") return undefined;
            const s = runtime.describe(runtime.get(id));
            return s.worktree?.path ?? s.cwd;
          },
        },
        plugin: (slug) => redactorPlugin(c, slug),
        logger: resolve(c, LOGGER).child({ module: "redaction" }),
      }),
    );
  },
  async stop(c: DependencyContainer) {
    for (const remove of removers.get(c) ?? []) remove();
    removers.delete(c);
  },
};
