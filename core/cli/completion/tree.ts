/**
 * The command tree as shell completion needs it, read from the commander program itself
 * (`buildProgram()`, through commander's Help: the same visible commands and options `--help`
 * prints), so completion stays true as verbs are added.
 */
import type { Command } from "commander";

export interface CompletionOption {
  /** `-V`, `--version`. */
  flags: string[];
  /** The option takes a value (`--port <n>`): the next word is that value. */
  takesValue: boolean;
  description: string;
}

export interface CompletionNode {
  /** Words from the program name: `["svc", "sentinel", "watch"]`. */
  path: string[];
  /** Each with its aliases (walked like the name, not offered). */
  subcommands: Array<{ name: string; aliases: string[]; description: string }>;
  options: CompletionOption[];
}

/** Every command of the tree, the root first, depth first in help order. */
export function completionTree(program: Command): CompletionNode[] {
  const out: CompletionNode[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const help = cmd.createHelp();
    const subs = help.visibleCommands(cmd);
    out.push({
      path,
      subcommands: subs.map((c) => ({
        name: c.name(),
        aliases: c.aliases(),
        description: firstSentence(c.description()),
      })),
      options: help.visibleOptions(cmd).map((o) => ({
        flags: [o.short, o.long].filter((f): f is string => typeof f === "string"),
        takesValue: o.required || o.optional,
        description: firstSentence(o.description),
      })),
    });
    for (const sub of cmd.commands) if (subs.includes(sub)) walk(sub, [...path, sub.name()]);
  };
  walk(program, [program.name()]);
  return out;
}

/** A description cut to its first clause, for the one line a shell shows beside a candidate. */
function firstSentence(text: string): string {
  const one = text.split(/(?<=[.;])\s|\s\(/)[0]!.replace(/[.;:]$/, "");
  return one.length > 80 ? `${one.slice(0, 77)}...` : one;
}
