/**
 * What `svc service install` runs and under which name: the absolute node binary, the absolute
 * CLI entry, `serve`, and the user's `SVC_HOME`. The default home (`~/.svc`) gets the plain name
 * (`svc.service`, `dev.svc.daemon`); any other home a name with a short hash of its path, so two
 * homes get two services; `--name` overrides both.
 */
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SvcError } from "../errors.js";

/** The first line of every file svc writes as a service unit: svc removes only files that carry it. */
export const MARKER = "Written by `svc service install`; `svc service uninstall` removes it.";

export interface ServiceSpec {
  /** Unit or agent name without suffix: `svc`, `svc-1a2b3c4d`, or `--name`. */
  name: string;
  /** Absolute `$SVC_HOME`. */
  home: string;
  /** argv of the daemon: node, the CLI entry, `serve`. */
  argv: string[];
  /** PATH captured at install time (the service manager's own PATH lacks the user's tools). */
  path: string | undefined;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$/;

/** The absolute path of the compiled CLI entry (dist/core/cli/svc.js), symlinks resolved. */
export function cliEntry(): string {
  const file = fileURLToPath(new URL("../cli/svc.js", import.meta.url));
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The default name for a home: `svc` for `~/.svc`, else `svc-<8 hex of sha256(home)>`. */
export function defaultServiceName(home: string): string {
  if (home === join(homedir(), ".svc")) return "svc";
  return `svc-${createHash("sha256").update(home).digest("hex").slice(0, 8)}`;
}

export function serviceSpec(home: string, options: { name?: string; env?: NodeJS.ProcessEnv } = {}): ServiceSpec {
  const name = options.name?.replace(/\.service$/, "") ?? defaultServiceName(home);
  if (!NAME.test(name))
    throw new SvcError(
      "usage",
      `--name ${JSON.stringify(options.name)} is not a usable service name; allowed: letters, digits, _ . @ - (starting with a letter or digit, at most 100)`,
    );
  for (const [what, value] of [
    ["the node binary", process.execPath],
    ["SVC_HOME", home],
  ] as const) {
    if (/[\n\r\0]/.test(value))
      throw new SvcError(
        "usage",
        `${what} (${JSON.stringify(value)}) holds a line break; a service unit cannot name it`,
      );
  }
  return { name, home, argv: [process.execPath, cliEntry(), "serve"], path: (options.env ?? process.env).PATH };
}
