/**
 * The team store this home is configured for and the team's key, read as the contract of issue 30
 * says: the URL from `SVC_STORE_URL`, else config `store.url`; the key from `SVC_STORE_KEY` (base64
 * of 32 bytes), else a key file (`SVC_STORE_KEY_FILE`, else config `store.keyFile`) of mode 0600
 * or stricter holding that base64. Until core/store/select.ts and core/store/postgres/secret-key.ts
 * land, `svc store migrate` and `svc doctor` read them here.
 */
import { readFile, stat } from "node:fs/promises";
import { SvcError } from "../../errors.js";
import { expandTilde } from "../../storage/paths.js";

type Tree = Readonly<Record<string, unknown>>;

const storeSection = (config: Tree): Record<string, unknown> => {
  const store = config.store;
  return store !== null && typeof store === "object" ? (store as Record<string, unknown>) : {};
};

/** True for the URLs that pick the team store. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/** The configured store's URL (undefined: the file store, the default). */
export function configuredStoreUrl(env: NodeJS.ProcessEnv, config: Tree): string | undefined {
  const fromEnv = env.SVC_STORE_URL?.trim();
  if (fromEnv) return fromEnv;
  const url = storeSection(config).url;
  return typeof url === "string" && url.trim() !== "" ? url.trim() : undefined;
}

/** A postgres URL given on the command line must not carry a password: the process list shows argv. */
export function refusePasswordInArgv(url: string, flag: string): void {
  let password = "";
  try {
    password = new URL(url).password;
  } catch {
    throw new SvcError(
      "store_url_invalid",
      `${flag} is not a URL: expected postgres://user@host:port/database or "file"`,
    );
  }
  if (password !== "")
    throw new SvcError(
      "store_url_invalid",
      `${flag} holds a password, which would show in the process list: drop it from the URL and give it through PGPASSWORD, ~/.pgpass, or SVC_STORE_URL`,
    );
}

const KEY_BYTES = 32;

function decodeKey(text: string, where: string): Buffer {
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, "base64");
  if (key.length !== KEY_BYTES || key.toString("base64") !== trimmed.replace(/\s+/g, ""))
    throw new SvcError(
      "store_key_missing",
      `${where} is not a team key: expected the base64 of ${KEY_BYTES} bytes (svc store keygen <file> writes one)`,
    );
  return key;
}

/** The team's 32-byte key, or `store_key_missing` saying where it is looked for. */
export async function loadTeamKey(env: NodeJS.ProcessEnv, config: Tree): Promise<Buffer> {
  if (env.SVC_STORE_KEY) return decodeKey(env.SVC_STORE_KEY, "SVC_STORE_KEY");
  const fromConfig = storeSection(config).keyFile;
  const file = env.SVC_STORE_KEY_FILE || (typeof fromConfig === "string" ? expandTilde(fromConfig) : undefined);
  if (!file)
    throw new SvcError(
      "store_key_missing",
      "the team store seals secrets with the team's key, and none is set: set SVC_STORE_KEY (base64 of 32 bytes), or SVC_STORE_KEY_FILE or config store.keyFile to a file of mode 0600 holding it",
    );
  let mode: number;
  try {
    mode = (await stat(file)).mode;
  } catch (err) {
    throw new SvcError("store_key_missing", `the team key file ${file} cannot be read: ${(err as Error).message}`);
  }
  if ((mode & 0o077) !== 0)
    throw new SvcError(
      "store_key_missing",
      `the team key file ${file} is readable by group or others (mode ${(mode & 0o777).toString(8)}): chmod 600 ${file}`,
    );
  return decodeKey(await readFile(file, "utf8"), `the team key file ${file}`);
}
