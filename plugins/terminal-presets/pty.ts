/** The part of node-pty we use. */
export interface PtyModule {
  spawn(
    file: string,
    args: string[],
    opts: { name?: string; cols?: number; rows?: number; cwd?: string; env?: Record<string, string> },
  ): PtyProcess;
}

export interface PtyProcess {
  pid: number;
  onData(cb: (data: string) => void): void;
  onExit(cb: (e: { exitCode: number; signal?: number }) => void): void;
  write(data: string): void;
  kill(signal?: string): void;
}

let probe: Promise<PtyModule | undefined> | undefined;

/**
 * The pty library when it is installed and loads (it is a native module), else undefined: the
 * daemon detects it at runtime; `features.pty` is only a hint. `SVC_TERMINAL_NO_PTY=1` forces
 * plain child processes.
 */
export function loadPty(env: NodeJS.ProcessEnv = process.env): Promise<PtyModule | undefined> {
  if (env.SVC_TERMINAL_NO_PTY === "1") return Promise.resolve(undefined);
  const name = "node-pty";
  return (probe ??= import(name).then(
    (m: { default?: PtyModule } & PtyModule) => (typeof m.spawn === "function" ? m : m.default),
    () => undefined,
  ));
}
