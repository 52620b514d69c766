/** `svc store migrate`'s human output: what was copied per part, then the checks of both sides. */
import { bold, println } from "../../cli/output.js";
import { printDoctorReport } from "../../doctor/print.js";
import type { MigrateResult } from "./migrate.js";

/** `2 of 3 secrets, …` from what the source exported and the destination took (the rest was there already). */
const counts = (exported: Record<string, number>, imported: Record<string, number>) =>
  Object.entries(exported)
    .map(([k, n]) => `${imported[k] ?? 0} of ${n} ${k}`)
    .join(", ") || "none";

export function printMigrateResult(r: MigrateResult): void {
  println(`${bold("copied")} ${r.from} → ${r.to}`);
  println(`  sentinels: ${r.sentinels.copied} copied, ${r.sentinels.skipped} skipped (already there, kept)`);
  for (const t of r.targets)
    println(
      `  target ${t.kind} (${t.sentinels} sentinel${t.sentinels === 1 ? "" : "s"}): ${t.note ?? `${counts(t.exported ?? {}, t.imported ?? {})} copied (the rest already there, kept)`}`,
    );
  for (const [side, report] of [
    ["source", r.checks.source],
    ["destination", r.checks.destination],
  ] as const) {
    println();
    println(
      bold(`checks of the ${side} (${report.store === "file" ? `file ${report.home}` : `postgres ${report.store}`})`),
    );
    printDoctorReport(report);
  }
}
