/** Runs a local tool's `--version` (never anything that reaches the network); `undefined` when it is not on PATH. */
import { execFile } from "node:child_process";

export function toolVersion(
  bin: string,
  env: NodeJS.ProcessEnv,
): Promise<{ found: false } | { found: true; ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(bin, ["--version"], { env, timeout: 10_000, encoding: "utf8" }, (err, stdout, stderr) => {
      if ((err as NodeJS.ErrnoException | null)?.code === "ENOENT") return resolve({ found: false });
      resolve({ found: true, ok: !err, output: `${stdout}${stderr}`.trim() });
    });
  });
}

/** `[major, minor, patch]` of the first dotted version in `text`, or `undefined`. */
export function versionIn(text: string): [number, number, number] | undefined {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

export function below(v: readonly number[], floor: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== (floor[i] ?? 0)) return (v[i] ?? 0) < (floor[i] ?? 0);
  return false;
}
