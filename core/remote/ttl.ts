import { SvcError } from "../errors.js";

/** `--ttl`-style durations: `90s`, `10m`, `2h` (a number alone is seconds). */
export function parseTtl(text: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new SvcError("usage", `--ttl must be a duration like 90s, 10m or 2h (got ${JSON.stringify(text)})`);
  const ms = Number(m[1]) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "s"];
  if (ms < 1_000 || ms > 24 * 3_600_000) throw new SvcError("usage", `--ttl must be between 1s and 24h (got ${text})`);
  return ms;
}
