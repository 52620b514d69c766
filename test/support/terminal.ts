/**
 * The CLI on a pseudo-terminal, for the prompts that do not echo: util-linux script(1) runs it,
 * and script's output is everything the terminal shows.
 */
import { spawn, spawnSync } from "node:child_process";
import type { CliResult } from "./cli.js";
import { childEnv } from "./cli.js";
import { finished } from "./command-lines.js";
import { CLI_PATH } from "./paths.js";

/** Whether script(1) is there to give the CLI a terminal (tests of a prompt skip without it). */
export const hasScript = spawnSync("script", ["--version"]).status === 0;

/**
 * Runs `svc <args>` on a pseudo-terminal in `home`; for each `[prompt, typed]` in order, waits for
 * the terminal to show `prompt`, then types `typed` and Enter. Resolves when the CLI has exited;
 * `stdout` is everything the terminal showed. Rejects when the CLI exits before a prompt shows.
 */
export async function answerPromptsOnTerminal(
  home: string,
  args: string[],
  answers: Array<[prompt: string, typed: string]>,
): Promise<CliResult> {
  const command = [process.execPath, CLI_PATH, ...args].map((a) => `'${a}'`).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    env: childEnv(home),
    stdio: ["pipe", "pipe", "pipe"],
  });
  const done = finished(child);
  let shown = "";
  child.stdout.on("data", (d) => (shown += d));
  const prompted = (prompt: string) =>
    new Promise<void>((resolve, reject) => {
      const look = () => shown.includes(prompt) && resolve();
      child.stdout.on("data", look);
      child.on("exit", () =>
        reject(
          new Error(
            `no prompt ${JSON.stringify(prompt)} before the CLI exited; the terminal showed: ${JSON.stringify(shown)}`,
          ),
        ),
      );
      look();
    });
  for (const [prompt, typed] of answers) {
    await prompted(prompt);
    child.stdin.write(`${typed}\r`);
  }
  const r = await done;
  child.stdin.end();
  return r;
}
