/**
 * The steps' dependency graph: ids unique, every `needs` names a step, no cycle; the order the
 * steps can start in; and which earlier steps a step may read outputs of (its ancestors).
 */
import { SvcError } from "../errors.js";
import type { SwarmStep } from "./schema.js";
import { outputRefs } from "./template.js";

/** Checks the graph and returns the step ids in a start order (file order among equals). */
export function checkGraph(steps: readonly SwarmStep[]): string[] {
  const byId = new Map<string, SwarmStep>();
  for (const s of steps) {
    if (byId.has(s.id))
      throw new SvcError(
        "invalid_input",
        `steps[${s.id}].id: the id "${s.id}" is used by more than one step; ids must be unique`,
      );
    byId.set(s.id, s);
  }
  for (const s of steps) {
    for (const n of s.needs ?? []) {
      if (n === s.id) throw new SvcError("invalid_input", `steps[${s.id}].needs: a step cannot need itself`);
      if (!byId.has(n))
        throw new SvcError(
          "invalid_input",
          `steps[${s.id}].needs: no step "${n}" (steps: ${[...byId.keys()].join(", ")})`,
        );
    }
  }
  const order = topoOrder(steps, byId);
  for (const s of steps) {
    const ancestors = ancestorsOf(s.id, byId);
    for (const ref of outputRefs(s.prompt)) {
      if (!byId.has(ref))
        throw new SvcError(
          "invalid_input",
          `steps[${s.id}].prompt: \${{ steps.${ref}.output }} names no step (steps: ${[...byId.keys()].join(", ")})`,
        );
      if (!ancestors.has(ref))
        throw new SvcError(
          "invalid_input",
          `steps[${s.id}].prompt: uses the output of "${ref}", which it does not need; add "${ref}" to steps[${s.id}].needs`,
        );
    }
  }
  return order;
}

function topoOrder(steps: readonly SwarmStep[], byId: Map<string, SwarmStep>): string[] {
  const state = new Map<string, "visiting" | "done">();
  const out: string[] = [];
  const visit = (id: string, path: string[]) => {
    const st = state.get(id);
    if (st === "done") return;
    if (st === "visiting") {
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw new SvcError("invalid_input", `steps need each other in a cycle: ${cycle.join(" -> ")}`);
    }
    state.set(id, "visiting");
    for (const n of byId.get(id)!.needs ?? []) visit(n, [...path, id]);
    state.set(id, "done");
    out.push(id);
  };
  for (const s of steps) visit(s.id, []);
  return out;
}

/** Every step `id` waits for, directly or through others. */
export function ancestorsOf(id: string, byId: ReadonlyMap<string, Pick<SwarmStep, "needs">>): Set<string> {
  const seen = new Set<string>();
  const stack = [...(byId.get(id)?.needs ?? [])];
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...(byId.get(n)?.needs ?? []));
  }
  return seen;
}
