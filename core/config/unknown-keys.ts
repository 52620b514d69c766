/**
 * A key svc does not know is kept (SPEC.md: unknown keys are tolerated and preserved), but
 * `config set` says so and suggests the known key it most likely meant (`daemon.prot` →
 * `daemon.port`).
 */
import { z } from "zod";
import { configSchema } from "./schema.js";

function unwrap(s: z.ZodType): z.ZodType {
  let cur = s;
  while (cur instanceof z.ZodOptional || cur instanceof z.ZodDefault || cur instanceof z.ZodNullable)
    cur = cur.unwrap() as z.ZodType;
  if (cur instanceof z.ZodPipe) return unwrap(cur.in as z.ZodType);
  return cur;
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

function closest(name: string, known: readonly string[]): string | undefined {
  let best: { key: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(name, k);
    if (d <= Math.max(1, Math.floor(k.length / 3)) && (!best || d < best.d)) best = { key: k, d };
  }
  return best?.key;
}

/** A warning when `segs` leaves the schema's known keys (none inside open maps such as `models` or `acpAgents`). */
export function unknownKeyWarning(segs: readonly string[], root: z.ZodType = configSchema): string | undefined {
  // `$schema` points an editor at manifests/config.schema.json; svc keeps it on purpose.
  if (segs[0] === "$schema") return undefined;
  let cur = unwrap(root);
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    if (cur instanceof z.ZodRecord) {
      cur = unwrap(cur.valueType as z.ZodType);
      continue;
    }
    if (!(cur instanceof z.ZodObject)) return undefined;
    const shape = cur.shape as Record<string, z.ZodType>;
    if (!Object.hasOwn(shape, seg)) {
      const at = segs.slice(0, i + 1).join(".");
      const guess = closest(seg, Object.keys(shape));
      const suggestion = guess ? `; did you mean ${[...segs.slice(0, i), guess].join(".")}?` : "";
      return `${at} is not a key svc knows; it is kept (unknown keys are preserved) but has no effect${suggestion}`;
    }
    cur = unwrap(shape[seg]!);
  }
  return undefined;
}
