/**
 * `svc serve` and `svc start` through a program that holds only their verb group, so a daemon does
 * not load the other verb groups' modules (about 25 files it would keep for nothing). Options,
 * help, errors and exit codes are the full program's (program-shell.ts, commands/serve.ts).
 */
import { registerServe } from "./commands/serve.js";
import { programShell, runProgram } from "./program-shell.js";

export function runServeCli(argv: string[]): Promise<number> {
  return runProgram(argv, (json) => {
    const program = programShell({ jsonErrors: json });
    registerServe(program);
    return program;
  });
}
