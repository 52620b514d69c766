/** `svc completion bash|zsh|fish` (loaded lazily by commands/completion.ts): the script, on stdout. */
import { SvcError } from "../errors.js";
import { bashCompletion } from "./completion/bash.js";
import { fishCompletion } from "./completion/fish.js";
import { completionTree } from "./completion/tree.js";
import { zshCompletion } from "./completion/zsh.js";
import type { Command } from "commander";

const SHELLS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;

/** The script for `shell`, from `program` (the root command, as built by program.ts's buildProgram). */
export function completionScript(shell: string, program: Command): string {
  const render = SHELLS[shell as keyof typeof SHELLS];
  if (!render)
    throw new SvcError("usage", `unknown shell ${JSON.stringify(shell)}; allowed: ${Object.keys(SHELLS).join(", ")}`);
  return render(completionTree(program));
}

export function printCompletion(shell: string, program: Command): void {
  process.stdout.write(completionScript(shell, program));
}
