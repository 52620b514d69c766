/** What a bench suite reports: each figure beside a baseline measured in the same run. */
export interface BenchLine {
  /** What was measured, e.g. "svc --version (cold start)". */
  name: string;
  /** The figure, in `unit`. */
  value: number;
  unit: string;
  /** The baseline measured in the same run, in the same unit. */
  baseline: { name: string; value: number };
  /** A target ratio (value / baseline), when there is one; reported, never asserted. */
  targetRatio?: number;
  note?: string;
}

export interface BenchSuite {
  name: string;
  run(): Promise<BenchLine[]>;
}
