/**
 * The team key (AES-256-GCM, 32 bytes) that seals secrets in the team store: from env
 * `SVC_STORE_KEY` (its base64), else from a key file (env `SVC_STORE_KEY_FILE`, else config
 * `store.keyFile`; a relative path is under `$SVC_HOME`) holding that base64. Like ssh with a
 * private key, a key file other users may read (mode wider than 0600) is refused. Errors name the
 * variable or the file, never the key.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, open, readFile, stat, unlink } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { SvcError } from "../../errors.js";
import { fsyncDir } from "../../storage/atomic-write.js";
import { expandTilde } from "../../storage/paths.js";

export const KEY_BYTES = 32;
const MAKE_ONE =
  "make one with `svc store keygen <file>` and give every daemon of the team the same file (config store.keyFile or SVC_STORE_KEY_FILE), or its content in SVC_STORE_KEY";

/** The key `text` encodes (base64 or base64url of exactly 32 bytes, surrounding whitespace ignored). */
function decodeKey(text: string, where: string): Buffer {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t))
    throw new SvcError("store_key_missing", `${where} is not base64 (of the 32-byte team key); ${MAKE_ONE}`);
  const key = Buffer.from(t, t.includes("-") || t.includes("_") ? "base64url" : "base64");
  if (key.length !== KEY_BYTES)
    throw new SvcError(
      "store_key_missing",
      `${where} holds ${key.length} bytes, but the team key is exactly ${KEY_BYTES} bytes (base64, 44 characters); ${MAKE_ONE}`,
    );
  return key;
}

/** Reads a key file, refusing one that is not a regular file or that others may read or write. */
async function readKeyFile(path: string, from: string): Promise<Buffer> {
  const where = `the team key file ${path} (${from})`;
  const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new SvcError(
      "store_key_missing",
      err.code === "ENOENT"
        ? `${where} does not exist; ${MAKE_ONE}`
        : `${where} cannot be read (${err.code ?? err.message}); ${MAKE_ONE}`,
    );
  });
  if (!st.isFile()) throw new SvcError("store_key_missing", `${where} is not a file; ${MAKE_ONE}`);
  const mode = st.mode & 0o777;
  if (mode & 0o077)
    throw new SvcError(
      "store_key_missing",
      `${where} has mode 0${mode.toString(8)}, so other users may read it: the team key must be 0600 or stricter (\`chmod 600 ${path}\`)`,
    );
  return decodeKey(await readFile(path, "utf8"), where);
}

export interface KeySources {
  env: NodeJS.ProcessEnv;
  home: string;
  /** config `store.keyFile` as resolved (SVC_STORE_KEY_FILE already folded in) and where it came from. */
  keyFile?: string;
  keyFileFrom?: string;
}

/** The team key, or `store_key_missing` saying what is wrong and how to make one. */
export async function loadTeamKey(s: KeySources): Promise<Buffer> {
  const inline = s.env.SVC_STORE_KEY;
  if (inline !== undefined && inline !== "") return decodeKey(inline, "environment variable SVC_STORE_KEY");
  if (s.keyFile !== undefined) {
    const p = expandTilde(s.keyFile);
    return readKeyFile(isAbsolute(p) ? p : resolve(s.home, p), s.keyFileFrom ?? "config.json store.keyFile");
  }
  throw new SvcError(
    "store_key_missing",
    `team mode needs the team key, which seals the webhook secrets in PostgreSQL, and none is set; ${MAKE_ONE}`,
  );
}

/**
 * Writes a fresh key file (mode 0600) at once or not at all: the key goes to a temporary file
 * beside it, fsynced, then is linked into place, which fails when the path exists (svc never
 * overwrites a key: what it sealed would be lost).
 */
export async function writeKeyFile(path: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fh = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600).catch(
    (err: NodeJS.ErrnoException) => {
      throw new SvcError("invalid_input", `cannot create a key file beside ${path}: ${err.message}`);
    },
  );
  try {
    await fh.writeFile(`${randomBytes(KEY_BYTES).toString("base64")}\n`);
    await fh.sync();
    await fh.close();
    await link(tmp, path).catch((err: NodeJS.ErrnoException) => {
      throw new SvcError(
        err.code === "EEXIST" ? "conflict" : "invalid_input",
        err.code === "EEXIST"
          ? `${path} already exists: svc never overwrites a key (the secrets sealed with it would be lost); choose another path`
          : `cannot create ${path}: ${err.message}`,
      );
    });
    await fsyncDir(dirname(resolve(path)));
  } finally {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
  }
}
