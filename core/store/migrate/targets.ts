/**
 * Each target's own records moved by `svc store migrate` through its `transfer` (plugin API,
 * core/plugin-api/team.ts): exported from the target set up on the source, imported into the one
 * set up on the destination. A target without `transfer` keeps nothing of its own to move.
 */
import { SvcError } from "../../errors.js";
import type { SentinelView } from "../../plugin-api/context.js";
import type { TargetInstance } from "../../plugin-api/target.js";

export interface TargetTransferReport {
  kind: string;
  /** Sentinels of this target kind. */
  sentinels: number;
  /** What the source exported (the target's own counts), and what the destination took. */
  exported?: Record<string, number>;
  imported?: Record<string, number>;
  /** Set when nothing was moved, saying why. */
  note?: string;
}

/** Refuses, before anything is written, a sentinel whose target plugin is not loaded on both sides. */
export function checkTransferable(
  from: ReadonlyMap<string, TargetInstance>,
  to: ReadonlyMap<string, TargetInstance>,
  sentinels: readonly SentinelView[],
): void {
  for (const kind of new Set(sentinels.map((s) => s.spec.target.kind))) {
    const src = from.get(kind);
    if (!src || !to.has(kind))
      throw new SvcError(
        "unavailable",
        `sentinels deliver to target "${kind}", whose plugin is not loaded here, so its records cannot be moved: nothing was copied (svc adapters ls --load)`,
      );
    if (src.transfer && !to.get(kind)!.transfer)
      throw new SvcError(
        "unavailable",
        `target "${kind}" can export its records but not import them on the destination: nothing was copied`,
      );
  }
}

export async function transferTargets(
  from: ReadonlyMap<string, TargetInstance>,
  to: ReadonlyMap<string, TargetInstance>,
  sentinels: readonly SentinelView[],
): Promise<TargetTransferReport[]> {
  const out: TargetTransferReport[] = [];
  for (const [kind, src] of [...from].sort(([a], [b]) => a.localeCompare(b))) {
    const ids = new Set(sentinels.filter((s) => s.spec.target.kind === kind).map((s) => s.id));
    const dst = to.get(kind);
    if (!src.transfer || !dst?.transfer) {
      out.push({ kind, sentinels: ids.size, note: "nothing of its own to move" });
      continue;
    }
    const { records, summary } = await src.transfer.export(ids);
    const imported = await dst.transfer.import(records);
    out.push({ kind, sentinels: ids.size, exported: summary, imported });
  }
  return out;
}
