/** Console output for the CLI: JSON, tables, and colour only when wanted (NO_COLOR honoured). */
import { SvcError, toPublicError, toSvcError } from "../errors.js";

export function useColor(stream: NodeJS.WriteStream = process.stdout, env = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  return stream.isTTY === true;
}

/** A colouring function; colour is decided by the stream the text is written to (stdout unless told). */
const paint =
  (code: number) =>
  (s: string, stream: NodeJS.WriteStream = process.stdout): string =>
    useColor(stream) ? `\u001b[${code}m${s}\u001b[0m` : s;
export const bold = paint(1);
export const dim = paint(2);
export const red = paint(31);
export const green = paint(32);
export const yellow = paint(33);

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

export function println(line = ""): void {
  process.stdout.write(line + "\n");
}

export function warn(line: string): void {
  process.stderr.write(`${yellow("warning:", process.stderr)} ${line}\n`);
}

/** A plain text table: columns padded to their widest cell. */
export function printTable(headers: string[], rows: Array<Array<string | number | boolean | undefined>>): void {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === undefined ? "" : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  println(bold(fmt(cells[0]!)));
  for (const r of cells.slice(1)) println(fmt(r));
}

/** Prints an error as the CLI shows errors and returns the exit code (1, or 2 for usage). */
export function reportError(err: unknown, options: { json?: boolean } = {}): number {
  const e = toSvcError(err);
  if (options.json) {
    printJson({ error: toPublicError(err).toJSON() });
    return e.code === "usage" ? 2 : 1;
  }
  process.stderr.write(`${red("error:", process.stderr)} ${e.message}\n`);
  if (Array.isArray(e.details) && e.details.length > 1) {
    for (const d of e.details) process.stderr.write(`  - ${d.path}: ${d.message}\n`);
  }
  if (e.code === "internal" && process.env.SVC_DEBUG) process.stderr.write(String((err as Error).stack) + "\n");
  return e.code === "usage" ? 2 : 1;
}

export function usageError(message: string): SvcError {
  return new SvcError("usage", message);
}
