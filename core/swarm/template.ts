/**
 * Prompt templating, GitHub Actions style: `${{ steps.<id>.output }}` is replaced by the final
 * output (the agent's text of its turn) of step `<id>`, which the step must need. Whitespace inside
 * the braces is free; nothing else is expanded. docs/swarm.md documents it.
 */
const REF = /\$\{\{\s*steps\.([A-Za-z][A-Za-z0-9_-]*)\.output\s*\}\}/g;

/** The step ids a prompt reads outputs of, in order, without repeats. */
export function outputRefs(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(REF)].map((m) => m[1]!))];
}

/** The prompt with every reference replaced by that step's output. */
export function renderPrompt(prompt: string, outputs: ReadonlyMap<string, string>): string {
  return prompt.replace(REF, (_all, id: string) => outputs.get(id) ?? "");
}
