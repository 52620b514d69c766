/**
 * `svc open`: asks the running daemon (with the owner's per-boot token) for a one-time login code
 * and opens `http://<daemon>/ui/#login=<code>` in the browser. The code rides in the fragment,
 * which browsers never send to a server (so it is in no request line, log or Referer); the page
 * spends it at once for a session cookie and removes it from the address bar and history.
 *
 * The browser is started on a small redirect file under $SVC_HOME (mode 0600), as Jupyter does,
 * so that the code is not in the opener's argv either.
 *
 * The opener's exit status decides whether the browser was opened. When it was not (no display,
 * no opener, an opener that found no browser), the link is printed to this terminal for the user
 * to open by hand, with the reason, and the command still exits 0: the link is the outcome asked
 * for. The link goes to this process's stdout only: never to the daemon's log (the daemon only
 * issued the code, and logs neither it nor the response).
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { baseUrlOf } from "../daemon/runtime-file.js";
import { writeFileDurable } from "../storage/atomic-write.js";
import { svcHome } from "../storage/paths.js";
import { noDisplayReason, type OpenResult, openWithPlatformOpener } from "./browser-opener.js";
import { DaemonClient } from "./daemon-client.js";
import { printJson, println, warn } from "./output.js";

interface LoginCode {
  code: string;
  expiresAt: number;
  path: string;
}

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function redirectPath(): string {
  return join(svcHome(), "dashboard-open.html");
}

async function redirectFile(url: string): Promise<string> {
  const html = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${escapeHtml(url)}"><title>svc dashboard</title><p>Opening the svc dashboard…</p>\n`;
  await writeFileDurable(redirectPath(), html, { mode: 0o600 });
  return pathToFileURL(redirectPath()).href;
}

/** Opens `url` in a browser through the redirect file; the file is removed again when no browser opened. */
async function openInBrowser(url: string): Promise<OpenResult> {
  const noDisplay = noDisplayReason(process.platform, process.env);
  if (noDisplay) return { opened: false, reason: noDisplay };
  const result = await openWithPlatformOpener(await redirectFile(url));
  if (!result.opened) await rm(redirectPath(), { force: true });
  return result;
}

export async function openDashboard(opts: { browser: boolean; print?: boolean; json?: boolean }): Promise<void> {
  const client = await DaemonClient.connect();
  const login = await client.request<LoginCode>("POST", "/dashboard/login-codes", {});
  const url = `${baseUrlOf(client.info)}${login.path}`;
  const result: OpenResult | undefined = opts.browser ? await openInBrowser(url) : undefined;
  const opened = result?.opened === true;
  if (opts.json)
    return printJson({
      url,
      expiresAt: login.expiresAt,
      opened,
      ...(result?.opened === false && { reason: result.reason }),
    });
  if (result?.opened === false)
    warn(`no browser could be opened (${result.reason}): open this one-time login link yourself`);
  if (opened) println("opened the svc dashboard in your browser");
  if (opts.print || !opened) {
    println(url);
    if (!opts.print) println("(this link works once, within 60 s; run `svc open` again for a new one)");
  }
}
