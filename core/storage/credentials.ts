/**
 * `$SVC_HOME/credentials.json`: provider secrets set through `setup_sentinel_provider` (and other
 * credentials), keyed by namespace and key. Created 0600 at its first write (never chmod-after),
 * changed under the cross-process lock with atomic durable writes. Values are never shown back:
 * nothing here lists or logs them.
 */
import { inject, injectable } from "tsyringe";
import { SvcError } from "../errors.js";
import type { CredentialStore } from "../plugin-api/context.js";
import { HOME } from "../tokens.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { secretModeFinding } from "./file-check.js";
import { readTextFile, updateJsonFile, readJsonFile } from "./json-file.js";
import { homeFile } from "./paths.js";

interface CredentialsFile {
  version: 1;
  values: Record<string, Record<string, string>>;
  [key: string]: unknown;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

@injectable()
export class FileCredentialStore implements CredentialStore {
  readonly path: string;

  constructor(@inject(HOME as symbol) home: string) {
    this.path = homeFile(home, "credentials");
  }

  async get(namespace: string, key: string): Promise<string | undefined> {
    check(namespace, key);
    const file = await this.read();
    return Object.hasOwn(file.values, namespace) && Object.hasOwn(file.values[namespace]!, key)
      ? file.values[namespace]![key]
      : undefined;
  }

  async has(namespace: string, key: string): Promise<boolean> {
    return (await this.get(namespace, key)) !== undefined;
  }

  async set(namespace: string, key: string, value: string): Promise<void> {
    check(namespace, key);
    if (typeof value !== "string" || value === "")
      throw new SvcError("invalid_input", `credential ${namespace}/${key} must be a non-empty string`);
    await this.update((f) => {
      f.values[namespace] = { ...(Object.hasOwn(f.values, namespace) ? f.values[namespace] : {}), [key]: value };
      return f;
    });
  }

  async delete(namespace: string, key: string): Promise<void> {
    check(namespace, key);
    await this.update((f) => {
      if (!Object.hasOwn(f.values, namespace) || !Object.hasOwn(f.values[namespace]!, key)) return undefined;
      delete f.values[namespace]![key];
      if (Object.keys(f.values[namespace]!).length === 0) delete f.values[namespace];
      return f;
    });
  }

  private async read(): Promise<CredentialsFile> {
    return normalize(this.path, await readJsonFile<CredentialsFile>(this.path));
  }

  private async update(mutate: (f: CredentialsFile) => CredentialsFile | undefined): Promise<void> {
    await updateJsonFile<CredentialsFile>(this.path, (current) => mutate(normalize(this.path, current)), {
      mode: 0o600,
    });
  }
}

function normalize(path: string, file: CredentialsFile | undefined): CredentialsFile {
  if (file === undefined) return { version: 1, values: {} };
  if (typeof file !== "object" || file === null || Array.isArray(file)) {
    throw new SvcError("config_invalid", `${path} is not a credentials file (expected a JSON object)`);
  }
  const values =
    typeof file.values === "object" && file.values !== null && !Array.isArray(file.values) ? file.values : {};
  return { ...file, version: 1, values };
}

function check(namespace: string, key: string): void {
  for (const [what, v] of [
    ["namespace", namespace],
    ["key", key],
  ] as const) {
    if (typeof v !== "string" || !NAME.test(v)) {
      throw new SvcError(
        "invalid_input",
        `credential ${what} must be 1-128 characters of letters, digits, _ . : - (starting with a letter or digit)`,
      );
    }
  }
}

/** `svc doctor`'s check of credentials.json (read-only): mode 0600, and a JSON object. Never quotes the file. */
export async function checkCredentialsFile(home: string): Promise<DoctorFinding[]> {
  const path = homeFile(home, "credentials");
  const out = await secretModeFinding(home, path);
  const text = await readTextFile(path);
  if (text === undefined) return out;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    out.push({
      severity: "error",
      file: "credentials.json",
      message: "not valid JSON or not a JSON object: the provider credentials in it cannot be read",
      fix: "restore it from a backup, or remove it and set the credentials again (svc sentinel providers setup <provider>, or the MCP tool setup_sentinel_provider)",
    });
  }
  return out;
}
