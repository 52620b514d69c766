/** `svc pair page`: serves the static web pair page (core/remote/web, as compiled) on loopback. */
import { untilSignal } from "../../cli/until-signal.js";
import { startPageServer } from "../page/page-server.js";
import { usageError } from "../../cli/output.js";

export async function pairPage(o: { port?: string; bind?: string }): Promise<void> {
  if (o.port !== undefined && (!/^\d+$/.test(o.port) || Number(o.port) > 65535))
    throw usageError(`--port must be a port number from 0 to 65535 (got ${JSON.stringify(o.port)})`);
  const page = await startPageServer({ port: o.port === undefined ? 0 : Number(o.port), bind: o.bind ?? "127.0.0.1" });
  process.stdout.write(`svc pair page at ${page.url}\nUse it with: svc pair offer --qr --pair-page ${page.url}\n`);
  await untilSignal(() => page.close());
  process.exit(0);
}
