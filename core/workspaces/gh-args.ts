/**
 * How `gh` reads a `gh pr create` (alias `new`) or `gh pr edit` command line, for the provenance
 * shim: the subcommand found as cobra finds it, then the flags parsed as pflag parses them, with
 * gh's own flag tables. Tables and rules are those of gh v2.60.0 (pkg/cmd/pr/create/create.go,
 * pkg/cmd/pr/edit/edit.go, `-R/--repo` from cmdutil.EnableRepoOverride on `gh pr`, `--help` and
 * `--version` from pkg/cmd/root/root.go), built on spf13/cobra v1.8.1 (Command.Find: stripFlags,
 * argsMinusFirstX) and spf13/pflag v1.0.5 (FlagSet.parseArgs, parseLongArg, parseShortArg).
 * A flag that takes a value takes the next argument whatever it looks like (`--title -b`: the
 * title is "-b"), or the rest of its argument (`-bVALUE`, `--body=VALUE`, `-b=VALUE`); `--` ends
 * the flags; short flags cluster (`-db VALUE`: --draft, then --body).
 */

interface Flag {
  long: string;
  short?: string;
  /** A boolean (pflag NoOptDefVal "true"): never takes the next argument. */
  bool?: true;
}

const HELP: Flag = { long: "help", bool: true };
const REPO: Flag = { long: "repo", short: "R" };
const TITLE: Flag = { long: "title", short: "t" };
const BODY: Flag = { long: "body", short: "b" };
const BODY_FILE: Flag = { long: "body-file", short: "F" };
const BASE: Flag = { long: "base", short: "B" };
const MILESTONE: Flag = { long: "milestone", short: "m" };

const ROOT_FLAGS: readonly Flag[] = [HELP, { long: "version", bool: true }];
const PR_FLAGS: readonly Flag[] = [HELP, REPO];
const CREATE_FLAGS: readonly Flag[] = [
  HELP,
  REPO,
  TITLE,
  BODY,
  BODY_FILE,
  BASE,
  MILESTONE,
  { long: "draft", short: "d", bool: true },
  { long: "head", short: "H" },
  { long: "editor", short: "e", bool: true },
  { long: "web", short: "w", bool: true },
  { long: "fill-verbose", bool: true },
  { long: "fill", short: "f", bool: true },
  { long: "fill-first", bool: true },
  { long: "reviewer", short: "r" },
  { long: "assignee", short: "a" },
  { long: "label", short: "l" },
  { long: "project", short: "p" },
  { long: "no-maintainer-edit", bool: true },
  { long: "recover" },
  { long: "template", short: "T" },
  { long: "dry-run", bool: true },
];
const EDIT_FLAGS: readonly Flag[] = [
  HELP,
  REPO,
  TITLE,
  BODY,
  BODY_FILE,
  BASE,
  MILESTONE,
  ...["reviewer", "assignee", "label", "project"].flatMap((f) => [{ long: `add-${f}` }, { long: `remove-${f}` }]),
  { long: "remove-milestone", bool: true },
];

/** Where a flag's value is written: in argument `index`, after `prefix` ("" when the value is an argument of its own). */
export interface ValueAt {
  index: number;
  prefix: string;
}

/** One flag as gh sets it; `at` is absent for a boolean given without a value. */
export interface ParsedFlag {
  name: string;
  value: string;
  at?: ValueAt;
}

export type PrCommand = "create" | "edit";

export type GhParse =
  | { kind: "other" }
  | { kind: "error"; command: PrCommand; message: string }
  | { kind: "pr"; command: PrCommand; flags: ParsedFlag[]; positional: number[]; help: boolean };

interface Arg {
  text: string;
  index: number;
}

const byLong = (flags: readonly Flag[], name: string) => flags.find((f) => f.long === name);
const byShort = (flags: readonly Flag[], c: string) => flags.find((f) => f.short === c);

/** cobra's guess, while it looks for the subcommand, that `s` is a flag followed by its value (an unknown flag is taken to be one). */
function flagBeforeValue(s: string, flags: readonly Flag[]): boolean {
  if (!s.startsWith("-") || s.includes("=")) return false;
  if (s.startsWith("--")) return !byLong(flags, s.slice(2))?.bool;
  return s.length === 2 && !byShort(flags, s[1]!)?.bool;
}

/** cobra's stripFlags: the command words, skipping what looks like a flag's value. */
function stripFlags(args: readonly Arg[], flags: readonly Flag[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const s = args[i]!.text;
    if (s === "--") break;
    if (flagBeforeValue(s, flags)) {
      if (args.length - i - 1 <= 1) break;
      i++;
    } else if (s !== "" && !s.startsWith("-")) words.push(s);
  }
  return words;
}

/** cobra's argsMinusFirstX: `args` without the first `x` that is not a flag's value. */
function argsMinusFirstX(args: readonly Arg[], x: string, flags: readonly Flag[]): Arg[] {
  for (let i = 0; i < args.length; i++) {
    const s = args[i]!.text;
    if (s === "--") break;
    if (flagBeforeValue(s, flags)) i++;
    else if (!s.startsWith("-") && s === x) return [...args.slice(0, i), ...args.slice(i + 1)];
  }
  return [...args];
}

/** cobra's Command.Find, down to `gh pr create|new|edit` (anything else is "other"). */
function findPrCommand(argv: readonly string[]): { command: PrCommand; rest: Arg[] } | undefined {
  let args: Arg[] = argv.map((text, index) => ({ text, index }));
  if (stripFlags(args, ROOT_FLAGS)[0] !== "pr") return undefined;
  args = argsMinusFirstX(args, "pr", ROOT_FLAGS);
  const sub = stripFlags(args, PR_FLAGS)[0];
  const command = sub === "create" || sub === "new" ? "create" : sub === "edit" ? "edit" : undefined;
  if (!command) return undefined;
  return { command, rest: argsMinusFirstX(args, sub!, PR_FLAGS) };
}

/** Go's strconv.ParseBool, as pflag's bool flags use it. */
function goBool(s: string): string | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return "true";
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return "false";
  return undefined;
}

class FlagError extends Error {}
class HelpRequested extends Error {}

function setFlag(out: ParsedFlag[], flag: Flag, value: string, at: ValueAt | undefined): void {
  if (flag.bool && at) {
    const b = goBool(value);
    if (b === undefined) throw new FlagError(`invalid boolean value for --${flag.long}`);
    value = b;
  }
  out.push(at ? { name: flag.long, value, at } : { name: flag.long, value });
}

/** pflag's parseArgs (interspersed), over the arguments left after the command words. */
function parseFlags(args: readonly Arg[], table: readonly Flag[]): { flags: ParsedFlag[]; positional: number[] } {
  const flags: ParsedFlag[] = [];
  const positional: number[] = [];
  for (let i = 0; i < args.length; i++) {
    const { text: s, index } = args[i]!;
    if (s.length < 2 || s[0] !== "-") {
      positional.push(index);
    } else if (s === "--") {
      positional.push(...args.slice(i + 1).map((a) => a.index));
      break;
    } else if (s[1] === "-") {
      const body = s.slice(2);
      if (body[0] === "-" || body[0] === "=") throw new FlagError("bad flag syntax");
      const eq = body.indexOf("=");
      const name = eq < 0 ? body : body.slice(0, eq);
      const flag = byLong(table, name);
      if (!flag) throw new FlagError(`unknown flag: --${name}`);
      if (eq >= 0) setFlag(flags, flag, body.slice(eq + 1), { index, prefix: s.slice(0, eq + 3) });
      else if (flag.bool) setFlag(flags, flag, "true", undefined);
      else if (i + 1 < args.length) setFlag(flags, flag, args[++i]!.text, { index: args[i]!.index, prefix: "" });
      else throw new FlagError(`flag needs an argument: --${name}`);
    } else {
      for (let k = 1; k < s.length; k++) {
        if (s.startsWith("test.", k)) break; // pflag ignores the rest of a cluster from Go's "test." flags on
        const c = s[k]!;
        const flag = byShort(table, c);
        if (!flag) {
          if (c === "h") throw new HelpRequested();
          throw new FlagError(`unknown shorthand flag: '${c}'`);
        }
        const rest = s.slice(k + 1);
        if (rest.length > 1 && rest[0] === "=") {
          setFlag(flags, flag, rest.slice(1), { index, prefix: s.slice(0, k + 2) });
        } else if (flag.bool) {
          setFlag(flags, flag, "true", undefined);
          continue;
        } else if (rest.length > 0) {
          setFlag(flags, flag, rest, { index, prefix: s.slice(0, k + 1) });
        } else if (i + 1 < args.length) {
          setFlag(flags, flag, args[++i]!.text, { index: args[i]!.index, prefix: "" });
        } else {
          throw new FlagError(`flag needs an argument: -${c}`);
        }
        break;
      }
    }
  }
  return { flags, positional };
}

/** Reads `argv` (the arguments after `gh`) as gh would. */
export function parseGh(argv: readonly string[]): GhParse {
  const found = findPrCommand(argv);
  if (!found) return { kind: "other" };
  const { command, rest } = found;
  try {
    const { flags, positional } = parseFlags(rest, command === "create" ? CREATE_FLAGS : EDIT_FLAGS);
    const help = flags.some((f) => f.name === "help" && f.value === "true");
    return { kind: "pr", command, flags, positional, help };
  } catch (err) {
    if (err instanceof HelpRequested) return { kind: "pr", command, flags: [], positional: [], help: true };
    if (err instanceof FlagError) return { kind: "error", command, message: err.message };
    throw err;
  }
}

/** How the body of a `gh pr create`/`gh pr edit` is given. */
export type BodySource =
  | { kind: "none"; reason?: string }
  | { kind: "arg"; command: PrCommand; at: ValueAt; value: string }
  | { kind: "file"; command: PrCommand; at: ValueAt; path: string }
  | { kind: "stdin"; command: PrCommand; at: ValueAt }
  | { kind: "editor" };

const last = (flags: readonly ParsedFlag[], name: string) => flags.findLast((f) => f.name === name);

/**
 * The body gh will use: the last `--body-file` when its value is not empty (gh reads the file, or
 * stdin for `-`, and for `create` it wins over `--body`), else the last `--body`. `editor` for a
 * `create` with neither, where gh asks for the body (not with --fill*, --web, unless --editor).
 * `none` with a `reason` when gh would refuse the command line, so there is nothing safe to stamp.
 */
export function bodySource(argv: readonly string[]): BodySource {
  const p = parseGh(argv);
  if (p.kind === "other") return { kind: "none" };
  if (p.kind === "error") return { kind: "none", reason: `gh pr ${p.command} will refuse it (${p.message})` };
  if (p.help) return { kind: "none" };
  const max = p.command === "create" ? 0 : 1;
  if (p.positional.length > max)
    return {
      kind: "none",
      reason: `gh pr ${p.command} takes ${max ? "one argument" : "no arguments"}, got ${p.positional.length}`,
    };
  const file = last(p.flags, "body-file");
  const body = last(p.flags, "body");
  const fileGiven = file !== undefined && file.value !== "";
  if (p.command === "edit" && fileGiven && body)
    return { kind: "none", reason: "gh pr edit refuses --body with --body-file" };
  const { command } = p;
  if (fileGiven)
    return file.value === "-"
      ? { kind: "stdin", command, at: file.at! }
      : { kind: "file", command, at: file.at!, path: file.value };
  if (body) return { kind: "arg", command, at: body.at!, value: body.value };
  if (command === "edit") return { kind: "none" };
  const on = (name: string) => last(p.flags, name)?.value === "true";
  const ghWrites = ["fill", "fill-first", "fill-verbose", "web"].some(on);
  return ghWrites && !on("editor") ? { kind: "none" } : { kind: "editor" };
}

const same = (a: ParsedFlag, b: ParsedFlag) =>
  a.name === b.name && a.value === b.value && a.at?.index === b.at?.index && a.at?.prefix === b.at?.prefix;

/**
 * `argv` with the value at `at` replaced by `value`, or undefined when gh would then read the
 * command line differently anywhere else (checked by parsing it again: e.g. `-b=` holds the body
 * "=", but `-b=` followed by anything reads as the `-b=VALUE` form).
 */
export function withValue(argv: readonly string[], at: ValueAt, value: string): string[] | undefined {
  const out = [...argv];
  out[at.index] = at.prefix + value;
  const before = parseGh(argv);
  const after = parseGh(out);
  if (before.kind !== "pr" || after.kind !== "pr" || after.help !== before.help) return undefined;
  if (after.positional.join() !== before.positional.join() || after.flags.length !== before.flags.length)
    return undefined;
  let matched = 0;
  const ok = before.flags.every((f, i) => {
    const g = after.flags[i]!;
    if (f.at?.index !== at.index || f.at.prefix !== at.prefix) return same(g, f);
    matched++;
    return same(g, { ...f, value });
  });
  return ok && matched === 1 ? out : undefined;
}
