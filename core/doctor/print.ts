/** `svc doctor`'s human output: findings grouped by severity, each with what to do, then a one-line verdict. */
import { bold, dim, green, println, red, yellow } from "../cli/output.js";
import type { DoctorReport } from "./doctor.js";

const GROUPS = [
  { severity: "error", title: "Errors (svc lost, cannot read or cannot run something)", paint: red },
  { severity: "warn", title: "Warnings (look at these)", paint: yellow },
  { severity: "info", title: "Notes (nothing lost; each says whether anything is to do)", paint: dim },
] as const;

export function printDoctorReport(report: DoctorReport): void {
  println(`${bold("home")} ${report.home}`);
  for (const g of GROUPS) {
    const items = report.findings.filter((f) => f.severity === g.severity);
    if (items.length === 0) continue;
    println();
    println(bold(g.title));
    for (const f of items) {
      println(`  ${g.paint(g.severity)} ${f.file}: ${f.message}`);
      println(`    ${dim("fix:")} ${f.fix}`);
    }
  }
  println();
  const count = (s: string) => report.findings.filter((f) => f.severity === s).length;
  const tally = `${count("error")} error(s), ${count("warn")} warning(s), ${count("info")} note(s)`;
  println(report.healthy ? green(`healthy: ${tally}`) : red(`not healthy: ${tally}; see the fixes above`));
}
