/**
 * The pair page's static server: `/` is the page, `/web/<name>.js` the browser modules compiled
 * from core/remote/web, `/dashboard/web/<name>.js` those of core/dashboard/web (the dashboard the
 * page runs through the pairing), and the favicon. An allow-list: nothing else of the package is
 * served. The offer stays in the URL fragment, which browsers never send to a server.
 */
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { PAGE_CSS } from "../../dashboard/page-style.js";
import { FAVICON_SVG } from "../../dashboard/web/favicon.js";
import { PAGE_HTML } from "./page-html.js";

/** URL prefix → the directory of compiled browser modules it serves. */
const MODULE_DIRS: Record<string, string> = {
  "/web/": fileURLToPath(new URL("../web/", import.meta.url)),
  "/dashboard/web/": fileURLToPath(new URL("../../dashboard/web/", import.meta.url)),
};

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; connect-src ws: wss:; style-src 'self' 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

export async function startPageServer(o: {
  port: number;
  bind: string;
}): Promise<{ url: string; close(): Promise<void> }> {
  // Exactly the browser modules of those directories, as compiled next to this file.
  const modules = new Set<string>();
  for (const [prefix, dir] of Object.entries(MODULE_DIRS))
    for (const f of await readdir(dir)) if (f.endsWith(".js")) modules.add(prefix + f);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://page.invalid").pathname;
    if (req.method !== "GET") return void res.writeHead(405).end();
    if (path === "/" || path === "/index.html") {
      return void res
        .writeHead(200, { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS })
        .end(PAGE_HTML);
    }
    if (path === "/favicon.svg" || path === "/favicon.ico") {
      return void res
        .writeHead(200, { "content-type": "image/svg+xml", "cache-control": "max-age=86400", ...SECURITY_HEADERS })
        .end(FAVICON_SVG);
    }
    if (path === "/dashboard/style.css") {
      // The dashboard's own style sheet, so the paired view looks as it does on loopback.
      return void res.writeHead(200, { "content-type": "text/css; charset=utf-8", ...SECURITY_HEADERS }).end(PAGE_CSS);
    }
    const m = /^(\/(?:dashboard\/)?web\/)([a-z0-9-]+\.js)$/.exec(path);
    if (!m || !modules.has(path)) return void res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    readFile(MODULE_DIRS[m[1]!]! + m[2], "utf8").then(
      (js) =>
        res
          .writeHead(200, { "content-type": "text/javascript; charset=utf-8", ...SECURITY_HEADERS })
          .end(js.replace(/\n\/\/# sourceMappingURL=.*$/m, "")),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.bind, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${o.bind.includes(":") ? `[${o.bind}]` : o.bind}:${port}/`,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}
