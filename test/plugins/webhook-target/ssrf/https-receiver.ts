/**
 * A real HTTPS receiver on loopback for gate and challenge tests, with the test certificate
 * (valid for localhost, receiver.test, *.receiver.test, 127.0.0.1 and ::1; trusted through
 * NODE_EXTRA_CA_CERTS). Records every request it sees, with the TLS server name the client sent.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { TEST_TLS } from "../../../support/tls.js";

export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  servername: string | false;
  /** The client's port: equal across requests that shared one connection. */
  remotePort: number | undefined;
  /** The local address the connection arrived at. */
  localAddress: string | undefined;
}

export type Handler = (req: SeenRequest, res: ServerResponse, raw: IncomingMessage) => void;

export interface Receiver {
  port: number;
  seen: SeenRequest[];
  /** Replaces the handler (default: 200 with an empty JSON object). */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startReceiver(host = "127.0.0.1", tls: { key: Buffer; cert: Buffer } = TEST_TLS): Promise<Receiver> {
  const seen: SeenRequest[] = [];
  let handler: Handler = (_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}");
  const server: Server = createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const entry: SeenRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
        servername: (req.socket as TLSSocket).servername ?? false,
        remotePort: req.socket.remotePort,
        localAddress: req.socket.localAddress,
      };
      seen.push(entry);
      handler(entry, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    handle: (h) => {
      handler = h;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver from a fixed table (a name missing from it fails like NXDOMAIN), counting lookups. */
export function tableResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  return {
    calls,
    async lookupAll(hostname: string) {
      calls.push(hostname);
      const answers = table[hostname];
      if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
      return answers.map((address) => ({ address, family: (address.includes(":") ? 6 : 4) as 4 | 6 }));
    },
  };
}

export const LOOPBACK_ALLOWED = ["127.0.0.0/8", "::1/128"];
