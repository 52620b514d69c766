/** `svc store migrate`'s human output: what was copied per part, then the checks of both sides. */
import { bold, println } from "../../cli/output.js";
import { printDoctorReport } from "../../doctor/print.js";
import type { MigrateResult } from "./migrate.js";

const counts = (c: Record<string, number>) =>
  Object.entries(c)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ") || "none";

export function printMigrateResult(r: MigrateResult): void {
  println(`${bold("copied")} ${r.from} → ${r.to}`);
  println(`  sentinels: ${r.sentinels.copied} copied, ${r.sentinels.skipped} skipped (already there, kept)`);
  for (const t of r.targets)
    println(
      `  target ${t.kind} (${t.sentinels} sentinel${t.sentinels === 1 ? "" : "s"}): ${t.note ?? counts(t.imported ?? {})}`,
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
