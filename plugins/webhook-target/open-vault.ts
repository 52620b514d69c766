/**
 * The webhook target's vault for its store: `sentinels-secrets.json` (the default), or in team
 * mode (`ctx.hasService("teamDatabase")`) the sealed table of team/team-vault.ts, whose module
 * loads at the vault's first use (a file-mode daemon never loads it).
 */
import type { PluginContext } from "../../core/plugin-api/index.js";
import type { VaultPort } from "./vault-port.js";
import { SecretVault } from "./vault.js";

export function openVault(ctx: PluginContext): VaultPort {
  const now = () => ctx.clock.now();
  if (!ctx.hasService("teamDatabase")) return new SecretVault(ctx.home, ctx.random, now);
  const db = ctx.service("teamDatabase");
  return deferredVault(async () =>
    (await import("./team/team-vault.js")).openTeamVault(db, { random: ctx.random, now }),
  );
}

/**
 * A vault opened at its first use (answering synchronously once open, as the opened one does);
 * a failed opening (the database unreachable) is tried again at the next use.
 */
export function deferredVault<V extends VaultPort>(open: () => Promise<V>): VaultPort & { opened(): Promise<V> } {
  let ready: V | undefined;
  let pending: Promise<V> | undefined;
  const opened = () =>
    (pending ??= open().then(
      (v) => (ready = v),
      (err: unknown) => {
        pending = undefined;
        throw err;
      },
    ));
  const via = <T>(use: (v: V) => T | Promise<T>): T | Promise<T> => (ready ? use(ready) : opened().then(use));
  return {
    opened,
    put: async (sentinelId, secret) => via((v) => v.put(sentinelId, secret)),
    get: (ref) => via((v) => v.get(ref)),
    key: (ref) => via((v) => v.key(ref)),
    values: () => via((v) => v.values()),
    remove: async (refs) => via((v) => v.remove(refs)),
    removeSentinel: async (sentinelId) => via((v) => v.removeSentinel(sentinelId)),
    prune: async (keep) => via((v) => v.prune(keep)),
  };
}
