/**
 * The CLI's fast path: `svc status` and `svc sentinel list|ls`, with or without `--json`, run
 * without the commander program (which loads commander and registers every verb group) and with
 * nothing heavy imported (no zod, no undici: runtime-info.ts, daemon-http.ts). They run the very
 * functions the program's actions run and report errors as runCli does, so output and exit codes
 * are the same; any other argument list, `--help` and usage errors included, goes to the program.
 */
type Verb = (json: boolean) => Promise<void>;

const VERBS: ReadonlyArray<{ words: string[]; run: Verb }> = [
  { words: ["status"], run: async (json) => (await import("./status.js")).printStatus({ json }) },
  { words: ["sentinel", "list"], run: async (json) => (await import("./sentinel/show.js")).list(json) },
  { words: ["sentinel", "ls"], run: async (json) => (await import("./sentinel/show.js")).list(json) },
];

/** The fast verb `argv` asks for (its words, then at most one `--json`), else undefined. */
export function fastVerb(argv: readonly string[]): Verb | undefined {
  for (const v of VERBS) {
    if (!v.words.every((w, i) => argv[i] === w)) continue;
    const rest = argv.slice(v.words.length);
    if (rest.length === 0 || (rest.length === 1 && rest[0] === "--json")) return v.run;
  }
  return undefined;
}

/** Runs a fast verb as runCli would run it through the program; returns the exit code. */
export async function runFast(verb: Verb, argv: readonly string[]): Promise<number> {
  const json = argv.includes("--json");
  try {
    await verb(json);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    return (await import("./output.js")).reportError(err, { json });
  }
}
