import type { Command } from "commander";

/** `svc completion bash|zsh|fish`: a completion script generated from the command tree. */
export function registerCompletion(program: Command): void {
  program
    .command("completion")
    .description(
      "Print a shell completion script for svc's verbs and options. bash: source <(svc completion bash); zsh: source <(svc completion zsh) after compinit; fish: svc completion fish | source",
    )
    .argument("<shell>", "bash, zsh or fish")
    .action(async (shell: string, _opts: unknown, cmd: Command) => {
      let root = cmd;
      while (root.parent) root = root.parent;
      (await import("../completion.js")).printCompletion(shell, root);
    });
}
