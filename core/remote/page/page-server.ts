/**
 * The pair page's static server: `/` is the page, `/web/<name>.js` the browser modules compiled
 * from core/remote/web (an allow-list: nothing else of the package is served). The offer stays
 * in the URL fragment, which browsers never send to a server.
 */
import { readdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { PAGE_HTML } from "./page-html.js";

const WEB_DIR = fileURLToPath(new URL("../web/", import.meta.url));

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
  // Exactly the browser modules of core/remote/web, as compiled next to this file.
  const modules = new Set((await readdir(WEB_DIR)).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3)));
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://page.invalid").pathname;
    if (req.method !== "GET") return void res.writeHead(405).end();
    if (path === "/" || path === "/index.html") {
      return void res
        .writeHead(200, { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS })
        .end(PAGE_HTML);
    }
    const m = /^\/web\/([a-z-]+)\.js$/.exec(path);
    if (!m || !modules.has(m[1]!)) return void res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    readFile(WEB_DIR + m[1] + ".js", "utf8").then(
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
