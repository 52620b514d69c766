/**
 * The webhook target's {@link StoreTransfer} (`svc store migrate`): its records
 * (transfer-records.ts) move between a file home and the team store. `export` reads the store the target is set up on, `import` writes into it; a record already
 * there is skipped, so importing twice changes nothing more. The files' side is here; the team
 * store's is team/team-transfer.ts, loaded only in team mode.
 */
import type { PluginContext, StoreTransfer } from "../../core/plugin-api/index.js";
import { SvcError } from "../../core/plugin-api/index.js";
import type { Outbox } from "./outbox/outbox.js";
import {
  parseTransferRecords,
  recordToRow,
  rowToRecord,
  summarize,
  type RowTransferRecord,
  type TraceTransferRecord,
} from "./transfer-records.js";
import type { VaultPort } from "./vault-port.js";
import { SecretVault } from "./vault.js";

/** The files' side: `sentinels-secrets.json` and the outbox under `$SVC_HOME`. */
export function fileTransfer(file: { outbox: () => Promise<Outbox>; vault: SecretVault }): StoreTransfer {
  return {
    async export(sentinelIds) {
      const outbox = await file.outbox();
      const secrets = (await file.vault.list(sentinelIds)).map((s) => ({ type: "secret" as const, ...s }));
      const rows: RowTransferRecord[] = [];
      const traces: TraceTransferRecord[] = [];
      for (const sentinelId of sentinelIds) {
        const own = outbox.rowsOf(sentinelId);
        for (const row of own) rows.push(rowToRecord(row, await outbox.readBody(row)));
        const trace = outbox.trace(sentinelId);
        if (own.length > 0 || trace)
          traces.push({
            type: "trace",
            sentinelId,
            accepted: outbox.accepted(sentinelId),
            removed: trace?.removed ?? 0,
            eventIds: trace?.eventIds ?? [],
          });
      }
      return { records: [...secrets, ...rows, ...traces], summary: summarize({ secrets, rows, traces }) };
    },

    async import(records) {
      const { secrets, rows, traces } = parseTransferRecords(records);
      const outbox = await file.outbox();
      const before = new Map(traces.map((t) => [t.sentinelId, outbox.accepted(t.sentinelId)]));
      const added = await file.vault.adopt(secrets.map(({ type: _, ...s }) => s));
      const imported = await outbox.importRows(rows.map(recordToRow));
      const changed: TraceTransferRecord[] = [];
      for (const t of traces) {
        const known =
          outbox.accepted(t.sentinelId) >= t.accepted && t.eventIds.every((e) => outbox.hasEvent(t.sentinelId, e));
        if (!known) await outbox.adopt(t.sentinelId, t.eventIds, t.accepted);
        if ((before.get(t.sentinelId) ?? 0) < t.accepted || !known) changed.push(t);
      }
      return { ...summarize({ secrets: [], rows: imported, traces: changed }), secrets: added };
    },
  };
}

/**
 * The target's transfer for the store it is set up on: files, or in team mode the team store
 * (whose module loads at the first call). `file` is the target's own outbox and vault, so a
 * running target and its transfer never hold two copies of one file.
 */
export function webhookTransfer(
  ctx: PluginContext,
  file: { outbox: () => Promise<Outbox>; vault: VaultPort },
): StoreTransfer {
  let chosen: Promise<StoreTransfer> | undefined;
  const choose = () =>
    (chosen ??= (async () => {
      if (ctx.hasService("teamDatabase")) {
        const { teamTransfer } = await import("./team/team-transfer.js");
        return teamTransfer(ctx.service("teamDatabase"), () => ctx.service("teamJobs"));
      }
      if (!(file.vault instanceof SecretVault))
        throw new SvcError("internal", "the webhook target outside team mode has no file vault to transfer");
      return fileTransfer({ outbox: file.outbox, vault: file.vault });
    })());
  return {
    export: async (sentinelIds) => (await choose()).export(sentinelIds),
    import: async (records) => (await choose()).import(records),
  };
}
