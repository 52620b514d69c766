/** The peer bench's printing: load averages, per-run lines and the tables of medians and ranges. */
import { execFileSync } from "node:child_process";
import { median } from "../measure.js";

export const say = (line: string) => process.stdout.write(`${line}\n`);

/** `uptime`'s load average, e.g. "3.39, 2.52, 3.32". */
export function loadAverage(): string {
  const out = execFileSync("uptime", { encoding: "utf8" });
  return /load averages?:\s*(.+)/.exec(out)?.[1]?.trim() ?? out.trim();
}

export const num = (v: number) =>
  Number.isFinite(v)
    ? v >= 100
      ? Math.round(v).toLocaleString("en-US")
      : v >= 10
        ? v.toFixed(1)
        : v.toFixed(2)
    : "n/a";

/** `median (min–max)` of `values`. */
export function spread(values: number[]): string {
  if (!values.length) return "skipped";
  return `${num(median(values))} (${num(Math.min(...values))}–${num(Math.max(...values))})`;
}

export const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : "n/a");

/** "met" or "NOT met" (or "n/a" without a figure) for `value <= limit` (or `>=` when `atLeast`). */
export function verdict(value: number, limit: number, atLeast = false): string {
  if (!Number.isFinite(value)) return "n/a";
  return (atLeast ? value >= limit : value <= limit) ? "met" : "NOT met";
}

/** A Markdown table, columns padded to their widest cell. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)];
}

/** The given quantile (0..1) of `values`, nearest rank. */
export function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
