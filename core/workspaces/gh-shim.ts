/**
 * The `gh` shim's program (run by `<shim dir>/gh`, see shim-dir.ts). It runs the real `gh` (the
 * first `gh` on PATH that is not the shim) with the same arguments, except that the body of a
 * `gh pr create` or `gh pr edit` gets the session's provenance footer, whichever way it is given
 * (found as gh finds it: gh-args.ts): `--body`/`-b` in every form, `--body-file`/`-F <file>`
 * (gh reads a stamped copy), `--body-file -`/`-F -` (stdin), or, for create, the editor (gh's
 * `GH_EDITOR` is set to a wrapper that runs the user's editor, then appends the footer). A body
 * it cannot stamp safely, or a stamping failure, never fails the command: the real gh then runs
 * with the original arguments, and the shim says so on stderr. Without a real gh the shim behaves
 * as the shell would without the command: `gh: command not found`, exit 127.
 */
import { spawn, spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { bodySource, withValue, type PrCommand } from "./gh-args.js";
import { appendFooter, provenanceFooter, type Provenance } from "./gh-footer.js";

const dir = process.env.SVC_GH_SHIM_DIR ?? "";
const args = process.argv.slice(2);

function realGh(): string | undefined {
  const self = safeRealpath(dir);
  for (const entry of (process.env.PATH ?? "").split(delimiter)) {
    if (!entry || safeRealpath(entry) === self) continue;
    const candidate = join(entry, "gh");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      /* next */
    }
  }
  return undefined;
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function footer(command: PrCommand = "create"): string {
  return provenanceFooter(JSON.parse(readFileSync(join(dir, "provenance.json"), "utf8")) as Provenance, command);
}

function readStdin(): string {
  try {
    return readFileSync(0, "utf8");
  } catch {
    return "";
  }
}

/** `--svc-editor <file>`: GH_EDITOR's stand-in. Runs the real editor, then stamps the file. */
function editorMode(file: string): number {
  const editor = process.env.SVC_GH_REAL_EDITOR || "nano";
  const r = spawnSync("sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" });
  const code = r.status ?? 1;
  if (code === 0) {
    try {
      writeFileSync(file, appendFooter(readFileSync(file, "utf8"), footer()));
    } catch {
      /* never fail the command over the footer */
    }
  }
  return code;
}

/** Says on stderr (where the shim logs) that gh gets the arguments as given. Names no value: a body may hold anything. */
function notStamped(reason: string): void {
  process.stderr.write(
    `svc gh shim: the pull request body is not stamped (${reason}); gh runs with the arguments as given\n`,
  );
}

async function main(): Promise<number> {
  if (args[0] === "--svc-editor" && args[1]) return editorMode(args[1]);
  const gh = realGh();
  if (!gh) {
    process.stderr.write("gh: command not found\n");
    return 127;
  }
  let argv = args;
  let input: string | undefined;
  const env = { ...process.env };
  const temp: string[] = [];
  try {
    const src = bodySource(args);
    if (src.kind === "none" && src.reason) notStamped(src.reason);
    let stamped: string[] | undefined;
    if (src.kind === "arg") {
      stamped = withValue(args, src.at, appendFooter(src.value, footer(src.command)));
    } else if (src.kind === "file" || src.kind === "stdin") {
      if (src.kind === "stdin") input = readStdin();
      const body = src.kind === "stdin" ? input! : readFileSync(src.path, "utf8");
      const tmp = join(dir, `body-${process.pid}.md`);
      writeFileSync(tmp, appendFooter(body, footer(src.command)));
      temp.push(tmp);
      stamped = withValue(args, src.at, tmp);
    } else if (src.kind === "editor") {
      const configured =
        process.env.GH_EDITOR || spawnSync(gh, ["config", "get", "editor"], { encoding: "utf8" }).stdout?.trim();
      env.SVC_GH_REAL_EDITOR = configured || process.env.VISUAL || process.env.EDITOR || "nano";
      env.GH_EDITOR = `'${join(dir, "gh-editor")}'`;
    }
    if (src.kind === "arg" || src.kind === "file" || src.kind === "stdin") {
      if (stamped) argv = stamped;
      else
        notStamped("gh would read the stamped command line differently; the body's form cannot hold a changed value");
    }
  } catch (err) {
    argv = args;
    notStamped(`stamping failed: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const child = spawn(gh, argv, { stdio: [input === undefined ? "inherit" : "pipe", "inherit", "inherit"], env });
  if (input !== undefined) child.stdin!.end(input);
  const code = await new Promise<number>((resolve) => {
    child.once("error", () => resolve(127));
    child.once("exit", (c, signal) => resolve(c ?? (signal ? 128 + 15 : 1)));
  });
  for (const t of temp) rmSync(t, { force: true });
  return code;
}

process.exitCode = await main();
