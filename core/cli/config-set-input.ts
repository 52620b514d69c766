/**
 * The value of `svc config set <key> [value]`: from the command line, or (with no value there)
 * from `--from-file`, a prompt without echo, or piped stdin. A secret (secrets.ts) is never taken
 * from the command line, where `ps` shows it to every user.
 */
import { parseKey } from "../config/dotted-path.js";
import { parseCliValue } from "../config/edit.js";
import { isSecretPath, secretKeysIn } from "../config/secrets.js";
import { usageError } from "./output.js";
import { readPrivateValue } from "./secret-input.js";

export interface ConfigSetInput {
  value: unknown;
  /** The value came from a file, a prompt or stdin, not the command line. */
  privateInput: boolean;
}

export async function configSetInput(
  key: string,
  text: string | undefined,
  opts: { string?: boolean; fromFile?: string },
): Promise<ConfigSetInput> {
  const segs = parseKey(key);
  if (text !== undefined) {
    if (opts.fromFile !== undefined)
      throw usageError(`give the value for ${key} on the command line or with --from-file, not both`);
    const value = parseCliValue(text, opts.string);
    refuseSecretsOnCommandLine(key, secretKeysIn(value, segs));
    return { value, privateInput: false };
  }
  const secretLeaf = isSecretPath(segs);
  if (!secretLeaf && opts.fromFile === undefined && process.stdin.isTTY) {
    throw usageError(
      `no value for ${key}: give it after the key (svc config set ${key} <value>), pipe it on stdin, or use --from-file <path>`,
    );
  }
  const read = await readPrivateValue(key, opts.fromFile);
  // A secret is a string whatever it looks like (a token of digits stays a string); other values parse as on the command line.
  return { value: secretLeaf ? read : parseCliValue(read, opts.string), privateInput: true };
}

function refuseSecretsOnCommandLine(key: string, secrets: readonly string[]): void {
  if (secrets.length === 0) return;
  const what =
    secrets[0] === key
      ? `${key} is a secret`
      : `the value for ${key} holds ${secrets.join(", ")}, ${secrets.length === 1 ? "a secret" : "secrets"}`;
  throw usageError(
    `${what}: it is not taken on the command line, where ps shows it to every user; ` +
      `pipe it on stdin (svc config set ${key} < file) or use --from-file <path>. Nothing was written`,
  );
}
