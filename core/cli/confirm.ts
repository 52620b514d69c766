/**
 * A yes/no question to the person at the terminal, for a step that gives away power: asked on a
 * TTY (default no), and without one only `--yes` says yes, so a script never grants by accident.
 */
import { createInterface } from "node:readline/promises";
import { usageError } from "./output.js";

export async function confirm(question: string, o: { yes?: boolean; flag?: string }): Promise<void> {
  if (o.yes) return;
  if (!process.stdin.isTTY || !process.stderr.isTTY)
    throw usageError(`${question}: not confirmed; on a terminal svc asks, otherwise add ${o.flag ?? "--yes"}`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question}? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw usageError("not confirmed: nothing was changed");
  } finally {
    rl.close();
  }
}
