import type { Command } from "commander";

/** The options every sentinel-creating verb with `--subject` shares (`webhooks add`, `sentinel create`). */
export function addMatchOptions(cmd: Command): Command {
  return cmd
    .option(
      "--subject <subject>",
      "subject to match (repeatable); a trailing * matches a prefix, e.g. 'ci:api*'",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--types <globs>", "comma-separated type globs (default: the provider's default types)")
    .option("--until <until>", "never | count:<n> | at:<ISO time or epoch ms> | subject_terminal (default: never)")
    .option("--provider <slug>", "provider slug (default: local-gh for github: subjects, else agentpush)");
}

/** `--label` and `--group`, descriptive fields of a sentinel. */
export function addLabelOptions(cmd: Command): Command {
  return cmd.option("--label <label>", "human-readable label").option("--group <group>", "fan-out group (descriptive)");
}
