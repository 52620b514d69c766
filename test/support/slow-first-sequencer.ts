/**
 * Runs the slowest test files first, so that no long file starts last and leaves the other
 * workers idle while it finishes (on a fresh clone vitest has no timings cached and orders by
 * file size, which put a 135 s file last: a tail of two minutes on one worker). The timings come
 * from `durations.json` (seconds per file, from a full run; `UPDATE_DURATIONS=1 npm test` writes
 * it anew). A file missing from it, a new one, counts as a few seconds; ties keep vitest's order.
 * Every file is listed, however quick, so that "missing" means "not measured yet".
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const UNKNOWN_S = 5;
const durations: Record<string, number> = JSON.parse(
  readFileSync(new URL("./durations.json", import.meta.url), "utf8"),
) as Record<string, number>;

export function recordedSeconds(root: string, moduleId: string): number {
  const known = durations[relative(root, moduleId)];
  return known ?? UNKNOWN_S;
}

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const root = this.ctx.config.root;
    return base
      .map((spec, i) => ({ spec, i, s: recordedSeconds(root, spec.moduleId) }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .map((x) => x.spec);
  }
}
