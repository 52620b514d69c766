/** Where the CLI takes a webhook secret from: a flag value, stdin (`-`), or an environment variable. */
import { usageError } from "./output.js";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * `--secret <whsec_…|->` or `--secret-env <VAR>` (at most one); `undefined` when neither is given.
 * `-` and an environment variable keep the secret out of the process list and shell history.
 */
export async function secretFrom(opts: { secret?: string; secretEnv?: string }): Promise<string | undefined> {
  if (opts.secret !== undefined && opts.secretEnv !== undefined) throw usageError("give --secret or --secret-env, not both");
  if (opts.secretEnv !== undefined) {
    const value = process.env[opts.secretEnv];
    if (!value) throw usageError(`--secret-env ${opts.secretEnv}: that environment variable is not set`);
    return value.trim();
  }
  return opts.secret === "-" ? (await readStdin()).trim() : opts.secret;
}
