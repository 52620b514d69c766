/**
 * The `env` map of `svc acp add`: `--env KEY=VALUE`, `--env KEY` (its value typed at a prompt that
 * does not echo, or piped on stdin) and `--env-from-file <path>` (KEY=VALUE lines). A variable whose
 * name makes it a secret in `acpAgents.<slug>.env` (core/config/secrets.ts: `ANTHROPIC_API_KEY`,
 * `GH_TOKEN`, …) is never taken as `KEY=VALUE` on the command line, where `ps` shows it to every user.
 */
import { isSecretPath } from "../../config/secrets.js";
import { usageError } from "../output.js";
import { readFlagFile, readPrivateValue } from "../secret-input.js";

/** A portable environment variable name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NAME_RULE = "letters, digits and _, not starting with a digit";

export interface AcpEnvFlags {
  /** `--env` values in order: `KEY=VALUE` or a bare `KEY`. */
  env?: string[];
  /** `--env-from-file` paths in order. */
  envFromFile?: string[];
}

/**
 * The variables for `acpAgents.<slug>.env`: the files' lines first, then the `--env` flags (a
 * later one wins). Every flag is checked before anything is read; a bare `KEY` is read last.
 */
export async function acpEnvInput(slug: string, flags: AcpEnvFlags): Promise<Record<string, string>> {
  const given: Array<[string, string]> = [];
  const asked: string[] = [];
  for (const flag of flags.env ?? []) {
    const i = flag.indexOf("=");
    const name = i < 0 ? flag : flag.slice(0, i);
    if (!ENV_NAME.test(name)) {
      // A bare argument that is no name may be a pasted value: it is not repeated.
      const got =
        i < 0
          ? "an argument without = that is not a name (not shown: it may be a value)"
          : `the name ${JSON.stringify(name)}`;
      throw usageError(`--env expects KEY=VALUE or KEY (KEY of ${NAME_RULE}), got ${got}`);
    }
    if (i < 0) asked.push(name);
    else if (isSecretPath(["acpAgents", slug, "env", name])) throw secretOnCommandLine(name);
    else given.push([name, flag.slice(i + 1)]);
  }
  if (asked.length > 1 && !process.stdin.isTTY) {
    throw usageError(
      `--env ${asked.join(", --env ")}: only one --env KEY can take its value from stdin; put the others in --env-from-file <path> (KEY=VALUE lines)`,
    );
  }
  const env: Record<string, string> = {};
  for (const path of flags.envFromFile ?? [])
    Object.assign(env, parseEnvFile(path, await readFlagFile("--env-from-file", path)));
  for (const [name, value] of given) env[name] = value;
  for (const name of asked) env[name] = await readPrivateValue(name);
  return env;
}

function secretOnCommandLine(name: string) {
  return usageError(
    `--env ${name}=…: ${name} is a secret (by its name): it is not taken on the command line, where ps shows it to every user; ` +
      `give --env ${name} without a value and pipe the value on stdin (or type it at the prompt), or use --env-from-file <path> with a ${name}=… line. Nothing was written`,
  );
}

/**
 * `KEY=VALUE` lines; blank lines and lines starting with `#` are skipped. The value is everything
 * after the first `=` as written (quotes included, like `docker run --env-file`). A bad line is
 * named by its number, never quoted (it may hold a secret).
 */
export function parseEnvFile(path: string, text: string): Record<string, string> {
  const env: Record<string, string> = {};
  text.split("\n").forEach((raw, n) => {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "" || line.trimStart().startsWith("#")) return;
    const i = line.indexOf("=");
    if (i < 0 || !ENV_NAME.test(line.slice(0, i)))
      throw usageError(`--env-from-file ${path} line ${n + 1}: expected KEY=VALUE with KEY of ${NAME_RULE}`);
    env[line.slice(0, i)] = line.slice(i + 1);
  });
  return env;
}
