/**
 * `svc adapters init <dir>`: scaffolds a working adapter package (see scaffold.ts); with
 * `--typescript` it also packs the types-only `@svc/plugin-api` into it (pack-types.ts), which the
 * scaffold's package.json names as a `file:` dev dependency.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { kindSlug } from "../../plugin-host/manifest-schema.js";
import { println, usageError } from "../output.js";
import { packTypesPackage } from "./pack-types.js";
import { scaffold, TYPES_TARBALL } from "./scaffold.js";

export interface InitOptions {
  provider?: string;
  target?: string;
  redactor?: string;
  typescript?: boolean;
  name?: string;
  cwd?: string;
}

/** npm's rule for a new package name (lower case, URL-safe, optionally scoped, at most 214 characters). */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

export function initPackage(dir: string, o: InitOptions): { dir: string; files: string[] } {
  const root = resolve(o.cwd ?? process.cwd(), dir);
  const name = o.name ?? basename(root);
  if (!NPM_NAME.test(name) || name.length > 214) {
    throw usageError(
      `${JSON.stringify(name)} is not a valid npm package name (lower-case letters, digits, '-', '.', '_', optionally @scope/); give one with --name, e.g. --name svc-adapter-hello`,
    );
  }
  const base =
    name
      .replace(/^@[^/]+\//, "")
      .replace(/^svc-adapter-/, "")
      .replace(/[^a-z0-9-]/g, "-")
      .replace(/^-+|-+$/g, "") || "sample";
  const both = o.provider === undefined && o.target === undefined && o.redactor === undefined;
  const provider = both ? base : o.provider;
  const target = both ? `${base}-log` : o.target;
  for (const [flag, kind] of [
    ["--provider", provider],
    ["--target", target],
    ["--redactor", o.redactor],
  ] as const) {
    if (kind === undefined) continue;
    const r = kindSlug.safeParse(kind);
    if (!r.success)
      throw usageError(`${flag} ${JSON.stringify(kind)}: ${r.error.issues[0]!.message}, e.g. ${flag} jira`);
  }
  if (existsSync(root) && readdirSync(root).length > 0) {
    throw usageError(`${root} is not empty; svc adapters init writes a new package into an empty or missing folder`);
  }
  const files = scaffold({
    name,
    provider,
    target,
    ...(o.redactor ? { redactor: o.redactor } : {}),
    typescript: o.typescript === true,
  });
  // First, so that a missing types package or npm leaves nothing written.
  if (o.typescript) packTypesPackage(join(root, TYPES_TARBALL));
  for (const [file, text] of files) {
    const path = join(root, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  const shown = relative(process.cwd(), root) || ".";
  println(
    `created ${name} in ${root}: ${[provider && `provider ${provider}`, target && `target ${target}`, o.redactor && `redactor ${o.redactor}`].filter(Boolean).join(", ")}`,
  );
  println(
    `next: cd ${shown} && ${o.typescript ? "npm install && " : ""}npm test    # installs it into a scratch SVC_HOME and receives an event from the real daemon`,
  );
  println(`then: svc adapters install ./${shown === "." ? "" : shown}`.replace(/\/$/, "/."));
  return { dir: root, files: [...files.keys(), ...(o.typescript ? [TYPES_TARBALL] : [])] };
}
