/**
 * `npm run bench`: runs every suite registered in suites/index.ts and prints each figure beside a
 * baseline measured in the same run, with the ratio and the machine. No pass/fail: a target is
 * reported, never asserted.
 */
import { cpus, totalmem } from "node:os";
import { SUITES } from "./suites/index.js";
import type { BenchLine } from "./types.js";

const only = process.argv.slice(2);
const cpu = cpus();
process.stdout.write(
  `machine: ${cpu.length} x ${cpu[0]?.model.trim() ?? "unknown cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${process.platform}/${process.arch}, node ${process.version}\n`,
);

const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

function print(line: BenchLine): void {
  const ratio = line.value / line.baseline.value;
  const target =
    line.targetRatio === undefined
      ? ""
      : `  (target <= ${line.targetRatio}x: ${ratio <= line.targetRatio ? "met" : "NOT met"})`;
  process.stdout.write(
    `  ${line.name}: ${fmt(line.value)} ${line.unit}  vs ${line.baseline.name}: ${fmt(line.baseline.value)} ${line.unit}  = ${ratio.toFixed(2)}x${target}\n`,
  );
  if (line.note) process.stdout.write(`    ${line.note}\n`);
}

let failed = 0;
for (const suite of SUITES) {
  if (only.length && !only.includes(suite.name)) continue;
  process.stdout.write(`\n${suite.name}\n`);
  try {
    for (const line of await suite.run()) print(line);
  } catch (err) {
    failed += 1;
    process.stdout.write(`  suite failed: ${(err as Error).message}\n`);
  }
}
process.exitCode = failed ? 1 : 0;
