/**
 * Prints the plain closing line CI reads: `N passed, N failed` (", N skipped" when any), after
 * vitest's own summary, preceded by the 15 slowest files (import + hooks + tests, in seconds) and
 * the run's wall time, so that a contributor sees where the suite's minutes go on every run.
 * With `UPDATE_DURATIONS=1` (a full run) it writes every file's time to `durations.json`, which
 * the sequencer reads to start the slowest files first (slow-first-sequencer.ts).
 */
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

const SLOWEST = 15;

export default class SummaryReporter implements Reporter {
  private started = performance.now();

  onTestRunStart(): void {
    this.started = performance.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load has no tests to count but is a failure.
      if (mod.state() === "failed" && [...mod.children.allTests()].length === 0) failed++;
    }
    failed += unhandledErrors.length;
    const out: string[] = [];
    const all = testModules
      .map((mod) => {
        const d = mod.diagnostic();
        return { file: relative(process.cwd(), mod.moduleId), ms: d.setupDuration + d.collectDuration + d.duration };
      })
      .sort((a, b) => b.ms - a.ms || (a.file < b.file ? -1 : 1));
    if (process.env.UPDATE_DURATIONS === "1") {
      const table = Object.fromEntries(all.map((t) => [t.file, Math.round(t.ms / 100) / 10]));
      writeFileSync(new URL("./durations.json", import.meta.url), `${JSON.stringify(table, null, 2)}\n`);
    }
    const timed = all.slice(0, SLOWEST);
    if (timed.length > 1) {
      out.push("", `slowest ${timed.length} files:`);
      for (const t of timed) out.push(`  ${(t.ms / 1000).toFixed(1).padStart(7)} s  ${t.file}`);
      out.push(`wall time ${((performance.now() - this.started) / 1000).toFixed(0)} s`);
    }
    out.push("", `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`, "");
    process.stdout.write(out.join("\n"));
  }
}
