/**
 * Where the CLI takes a secret from, never its command line (which `ps` shows to every user): a
 * flag naming stdin (`-`) or an environment variable, a file, a prompt that does not echo, or piped stdin.
 * (`privateSecretFrom` refuses a `--secret <value>` given on argv.)
 */
import { readFile } from "node:fs/promises";
import { usageError } from "./output.js";

/** Everything piped on stdin, as UTF-8. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Where a verb that never takes its secret on the command line is told to read it. */
export interface PrivateSecretFlags {
  /** `--secret` alone (`true`) or `--secret -`: a prompt that does not echo, or piped stdin. Any other value is refused. */
  secret?: string | boolean;
  secretFile?: string;
  secretEnv?: string;
}

/**
 * The secret from `--secret` (prompted without echo on a terminal, else read from piped stdin; `-`
 * is the same), `--secret-file <path>` or `--secret-env <VAR>`, at most one; `undefined` when none
 * is given. A value after `--secret` is refused without being repeated: it is already on the
 * command line, where `ps` shows it to every user. `label` names the secret at the prompt.
 */
export async function privateSecretFrom(flags: PrivateSecretFlags, label: string): Promise<string | undefined> {
  const given = (
    [
      ["--secret", flags.secret],
      ["--secret-file", flags.secretFile],
      ["--secret-env", flags.secretEnv],
    ] as const
  )
    .filter(([, v]) => v !== undefined && v !== false)
    .map(([flag]) => flag);
  if (given.length > 1)
    throw usageError(`give one of --secret, --secret-file or --secret-env, not ${given.join(" and ")}`);
  if (typeof flags.secret === "string" && flags.secret !== "-") throw usageError(SECRET_ON_ARGV_REFUSAL);
  if (flags.secretEnv !== undefined) return secretFromEnv("--secret-env", flags.secretEnv);
  if (flags.secretFile !== undefined) return readSecretFile("--secret-file", flags.secretFile);
  return given.length === 1 ? readPrivateValue(label) : undefined;
}

export const SECRET_ON_ARGV_REFUSAL =
  "--secret takes no value: a secret on the command line is shown by ps to every user of this machine " +
  "(and kept in shell history), so it was not used. Give --secret alone to type it at a prompt that does not echo " +
  "(or pipe it: --secret < file), or use --secret-file <path> or --secret-env <VAR>";

/** The secret in the environment variable `name` given to `flag`, trimmed; an unset or empty one is a usage error. */
function secretFromEnv(flag: string, name: string): string {
  const value = process.env[name]?.trim();
  if (!value) throw usageError(`${flag} ${name}: that environment variable is not set`);
  return value;
}

/**
 * The value for `label` from `--from-file <path>` when given, else typed at a prompt that does not
 * echo when stdin is a terminal, else read from piped stdin to its end. Trailing line breaks are
 * trimmed; an empty value is refused.
 */
export async function readPrivateValue(label: string, fromFile?: string): Promise<string> {
  const [text, source] =
    fromFile !== undefined
      ? [await readFlagFile("--from-file", fromFile), `the file ${fromFile}`]
      : process.stdin.isTTY
        ? [await promptHidden(`${label} (input hidden): `), "the prompt"]
        : [await readStdin(), "stdin"];
  const value = trimLineBreaks(text);
  if (value === "") throw usageError(`${label}: the value read from ${source} is empty; nothing was written`);
  return value;
}

/** The secret held by the file `path` given to `flag` (`--auth-token-file`): trailing line breaks trimmed, an empty one refused. */
export async function readSecretFile(flag: string, path: string): Promise<string> {
  const value = trimLineBreaks(await readFlagFile(flag, path));
  if (value === "") throw usageError(`${flag} ${path}: the file is empty`);
  return value;
}

const trimLineBreaks = (text: string) => text.replace(/[\r\n]+$/, "");

/** The text of the file `path` given to `flag`; a file that cannot be read is a usage error naming both. */
export async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw usageError(
      `${flag} ${path}: ${code === "ENOENT" ? "no such file" : code === "EISDIR" ? "a directory, not a file" : (err as Error).message}`,
    );
  }
}

/** One line typed on the terminal with echo off (raw mode); Ctrl-C or Ctrl-D on an empty line cancels. */
function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: what is typed the moment it appears is never echoed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  stdin.setEncoding("utf8");
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = "";
    const finish = (outcome: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      outcome();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return finish(() => resolve(typed));
        if (ch === "\u0003" || (ch === "\u0004" && typed === ""))
          return finish(() => reject(usageError("cancelled; nothing was written")));
        if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1);
        else if (ch >= " ") typed += ch;
      }
    };
    stdin.on("data", onData);
  });
}
