/**
 * The dashboard's files, served by the daemon under `/ui/`: the HTML shell, the style sheet, the
 * favicon and the browser modules compiled from core/dashboard/web (an allow-list: the `.js`
 * files of that folder, nothing else of the package). Imported on the first request to `/ui`.
 * Every answer carries a strict Content-Security-Policy: only the daemon's own scripts, styles
 * and connections; no inline script, no CDN.
 */
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { SvcError } from "../errors.js";
import type { RouteResponse } from "../plugin-api/http.js";
import { FAVICON_SVG, pageHtml } from "./page-html.js";
import { PAGE_CSS } from "./page-style.js";

const WEB_DIR = fileURLToPath(new URL("./web/", import.meta.url));

export const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "cache-control": "no-cache",
};

let modules: Promise<Set<string>> | undefined;
/** The browser modules there are: `<name>.js` in the compiled web folder. */
const moduleNames = () =>
  (modules ??= readdir(WEB_DIR).then(
    (files) => new Set(files.filter((f) => /^[a-z-]+\.js$/.test(f)).map((f) => f.slice(0, -3))),
  ));

const ok = (type: string, body: string): RouteResponse => ({
  status: 200,
  headers: { "content-type": type, ...SECURITY_HEADERS },
  body,
});

export function favicon(): RouteResponse {
  return ok("image/svg+xml", FAVICON_SVG);
}

/** The answer for `GET <path>` under `/ui`. */
export async function servePage(path: string): Promise<RouteResponse> {
  if (path === "/ui" || path === "/ui/" || path === "/ui/index.html")
    return ok("text/html; charset=utf-8", pageHtml([...(await moduleNames())].filter((m) => m !== "transport").sort()));
  if (path === "/ui/style.css") return ok("text/css; charset=utf-8", PAGE_CSS);
  if (path === "/ui/favicon.svg") return favicon();
  const m = /^\/ui\/web\/([a-z-]+)\.js$/.exec(path);
  if (m && (await moduleNames()).has(m[1]!)) {
    const js = await readFile(`${WEB_DIR}${m[1]}.js`, "utf8");
    return ok("text/javascript; charset=utf-8", js.replace(/\n\/\/# sourceMappingURL=.*$/m, ""));
  }
  throw new SvcError("not_found", `the dashboard has no file ${path}; open /ui/`);
}
