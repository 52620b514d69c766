/**
 * Starting the platform's opener (xdg-open, open, start) on a file or URL, and telling whether it
 * worked: a spawned opener is not an opened browser. `xdg-open`, `open` and `start` exit non-zero
 * when they find no browser, and a missing opener fails to spawn (ENOENT); either is a failure with
 * its reason. An opener still running after a grace period (some hand the target to a browser they
 * wait for) is taken as started and left running, detached.
 */
import { spawn } from "node:child_process";

/** The platform's opener for a URL or file: xdg-open, open, or start. */
export function openerFor(platform: NodeJS.Platform, target: string): { cmd: string; args: string[] } {
  if (platform === "darwin") return { cmd: "open", args: [target] };
  if (platform === "win32") return { cmd: "cmd", args: ["/c", "start", '""', target] };
  return { cmd: "xdg-open", args: [target] };
}

export type OpenResult = { opened: true } | { opened: false; reason: string };

/**
 * Why no graphical browser can be started here, or undefined when one may be: on Linux and the
 * other X11/Wayland systems, a session with neither DISPLAY nor WAYLAND_DISPLAY (ssh, a console,
 * a container) has none, and xdg-open would fall back to a text browser with no terminal.
 */
export function noDisplayReason(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | undefined {
  if (platform === "darwin" || platform === "win32") return undefined;
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return undefined;
  return "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)";
}

/** How long an opener may run before it counts as started: xdg-open and open return at once when they work. */
const GRACE_MS = 5_000;

/** Runs the opener on `target` and waits for its exit status (up to a grace period). */
export function openWithPlatformOpener(
  target: string,
  opts: { platform?: NodeJS.Platform; graceMs?: number } = {},
): Promise<OpenResult> {
  const { cmd, args } = openerFor(opts.platform ?? process.platform, target);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { detached: true, stdio: "ignore" });
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: OpenResult) => {
      clearTimeout(timer);
      child.removeAllListeners();
      resolve(result);
    };
    child.once("error", (err: NodeJS.ErrnoException) =>
      settle({
        opened: false,
        reason: err.code === "ENOENT" ? `${cmd} is not installed` : `${cmd} could not be started: ${err.message}`,
      }),
    );
    child.once("exit", (code, signal) => {
      if (code === 0) settle({ opened: true });
      else
        settle({
          opened: false,
          reason: signal ? `${cmd} was killed by ${signal}` : `${cmd} exited with status ${code}`,
        });
    });
    child.once("spawn", () => {
      timer = setTimeout(() => {
        child.removeAllListeners();
        child.unref();
        resolve({ opened: true });
      }, opts.graceMs ?? GRACE_MS);
    });
  });
}
