/**
 * config.json's file mode. svc creates the file 0600 and keeps an existing file's mode on every
 * rewrite (never widening it); a file holding secrets (secrets.ts) that group or others can read
 * is told by `config show`, `config set`, the `config_set` tool and `svc doctor`.
 */
import { stat } from "node:fs/promises";
import type { AtomicWriteOptions } from "../storage/atomic-write.js";
import { secretKeysIn } from "./secrets.js";

/** How every writer of config.json writes it. */
export const CONFIG_WRITE: AtomicWriteOptions = { createMode: 0o600 };

/** Secrets in a config file that group or others can read. */
export interface ExposedSecrets {
  /** The secrets' dotted keys, in document order. */
  keys: string[];
  /** The file's permission bits. */
  mode: number;
}

/** The secrets of the raw tree `raw` when the file at `path` is readable by group or others; `undefined` otherwise (or when absent). */
export async function exposedSecrets(path: string, raw: unknown): Promise<ExposedSecrets | undefined> {
  const keys = secretKeysIn(raw);
  if (keys.length === 0) return undefined;
  const st = await stat(path).catch(() => undefined);
  if (!st || (st.mode & 0o044) === 0) return undefined;
  return { keys, mode: st.mode & 0o777 };
}

/** "holds daemon.authToken and is readable by group or others (mode 0644)": the keys named, never their values. */
export function describeExposed(e: ExposedSecrets): string {
  const named =
    e.keys.length <= 3 ? e.keys.join(", ") : `${e.keys.slice(0, 3).join(", ")} and ${e.keys.length - 3} more`;
  return `holds ${named} and is readable by group or others (mode ${e.mode.toString(8).padStart(4, "0")})`;
}

/** The warning `config show`, `config set` and `config_set` give: what is exposed and the command that fixes it. */
export function exposedWarning(path: string, e: ExposedSecrets): string {
  return `${path} ${describeExposed(e)}; run chmod 600 ${path}`;
}
