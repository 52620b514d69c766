/**
 * The two tables every shell's completion function walks the typed words with: which word moves
 * from a command to its subcommand, and which options take a value (the next word is skipped).
 * Keys are `<command path>/<word>`, with the path's words joined by spaces (`svc sentinel/watch`).
 */
import type { CompletionNode } from "./tree.js";

export interface WalkTables {
  /** `svc/sentinel` → `svc sentinel`. */
  moves: Array<{ key: string; to: string }>;
  /** `svc sentinel watch/--types`. */
  valued: string[];
}

export function walkTables(nodes: CompletionNode[]): WalkTables {
  const moves: WalkTables["moves"] = [];
  const valued: string[] = [];
  for (const n of nodes) {
    const at = n.path.join(" ");
    for (const s of n.subcommands) {
      if (!nodes.some((m) => m.path.join(" ") === `${at} ${s.name}`)) continue;
      for (const word of [s.name, ...s.aliases]) moves.push({ key: `${at}/${word}`, to: `${at} ${s.name}` });
    }
    for (const o of n.options) if (o.takesValue) for (const f of o.flags) valued.push(`${at}/${f}`);
  }
  return { moves, valued };
}

/** The words offered at a node: subcommands, then option flags. */
export function words(n: CompletionNode): { subs: string[]; opts: string[] } {
  return { subs: n.subcommands.map((s) => s.name), opts: n.options.flatMap((o) => o.flags) };
}
