/**
 * `svc open`: asks the running daemon (with the owner's per-boot token) for a one-time login code
 * and opens `http://<daemon>/ui/#login=<code>` in the browser. The code rides in the fragment,
 * which browsers never send to a server (so it is in no request line, log or Referer); the page
 * spends it at once for a session cookie and removes it from the address bar and history.
 *
 * The browser is started on a small redirect file under $SVC_HOME (mode 0600), as Jupyter does,
 * so that the code is not in the opener's argv either.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { baseUrlOf } from "../daemon/runtime-file.js";
import { writeFileDurable } from "../storage/atomic-write.js";
import { svcHome } from "../storage/paths.js";
import { DaemonClient } from "./daemon-client.js";
import { printJson, println, warn } from "./output.js";

interface LoginCode {
  code: string;
  expiresAt: number;
  path: string;
}

/** The platform's opener for a URL or file: xdg-open, open, or start. */
export function openerFor(platform: NodeJS.Platform, target: string): { cmd: string; args: string[] } {
  if (platform === "darwin") return { cmd: "open", args: [target] };
  if (platform === "win32") return { cmd: "cmd", args: ["/c", "start", '""', target] };
  return { cmd: "xdg-open", args: [target] };
}

/** Starts the opener detached; resolves false when it could not be started (not installed). */
function launch(target: string): Promise<boolean> {
  const { cmd, args } = openerFor(process.platform, target);
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { detached: true, stdio: "ignore" });
    child.once("error", () => resolve(false));
    child.once("spawn", () => {
      child.unref();
      resolve(true);
    });
  });
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

async function redirectFile(url: string): Promise<string> {
  const file = join(svcHome(), "dashboard-open.html");
  const html = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${escapeHtml(url)}"><title>svc dashboard</title><p>Opening the svc dashboard…</p>\n`;
  await writeFileDurable(file, html, { mode: 0o600 });
  return pathToFileURL(file).href;
}

export async function openDashboard(opts: { browser: boolean; print?: boolean; json?: boolean }): Promise<void> {
  const client = await DaemonClient.connect();
  const login = await client.request<LoginCode>("POST", "/dashboard/login-codes", {});
  const url = `${baseUrlOf(client.info)}${login.path}`;
  let opened = false;
  if (opts.browser) {
    opened = await launch(await redirectFile(url));
    if (!opened)
      warn(
        `could not start a browser (${openerFor(process.platform, "").cmd} is not installed): open the link below yourself`,
      );
  }
  if (opts.json) return printJson({ url, expiresAt: login.expiresAt, opened });
  if (opened) println("opened the svc dashboard in your browser");
  if (opts.print || !opened) {
    println(url);
    if (!opts.print) println("(this link works once, within 60 s; run `svc open` again for a new one)");
  }
}
