/** Runs a service manager's command (systemctl, launchctl) and reports how it ended; never throws. */
import { execFile } from "node:child_process";

export interface CommandResult {
  argv: string[];
  ok: boolean;
  code: number | string | null;
  stdout: string;
  stderr: string;
}

export function runCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(argv[0]!, argv.slice(1), { env, timeout: 30_000, encoding: "utf8" }, (err, stdout, stderr) => {
      const code = err ? ((err as NodeJS.ErrnoException).code ?? (err as { status?: number }).status ?? null) : 0;
      resolve({ argv, ok: !err, code, stdout: String(stdout ?? ""), stderr: String(stderr ?? "") });
    });
  });
}

/** A command as a person would paste it into a POSIX shell. */
export function shellLine(argv: string[]): string {
  return argv.map((a) => (/^[A-Za-z0-9_\-./:@+=,]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(" ");
}
