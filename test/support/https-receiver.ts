/**
 * A real HTTPS receiver on loopback for egress, challenge and webhook tests, with the test
 * certificate (valid for localhost, receiver.test, *.receiver.test, 127.0.0.1 and ::1; trusted
 * through NODE_EXTRA_CA_CERTS). Records every request it sees, with the TLS server name the client
 * sent. Also: a table resolver, a receiver with a gate egress in front, and a failure helper.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { createEgress, type Egress } from "../../core/egress/egress.js";
import type { Resolver } from "../../core/egress/resolver.js";
import { SvcError } from "../../core/errors.js";
import { TEST_TLS } from "./tls.js";

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
  /** How many client connections are open now. */
  connections(): Promise<number>;
  close(): Promise<void>;
}

export async function startReceiver(
  host = "127.0.0.1",
  tls: { key: Buffer; cert: Buffer } = TEST_TLS,
): Promise<Receiver> {
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
    connections: () =>
      new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
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

/** A receiver and an egress (loopback exempted unless `allowSubnets` says otherwise) in front of it. */
export async function startGate(options: { resolver?: Resolver; allowSubnets?: readonly string[] } = {}) {
  const rx = await startReceiver();
  const egress = createEgress({
    allowSubnets: options.allowSubnets ?? LOOPBACK_ALLOWED,
    ...(options.resolver ? { resolver: options.resolver } : {}),
  });
  const close = async () => {
    await egress.close();
    await rx.close();
  };
  return { rx, egress, close };
}

/** Runs `fn` with its own egress client, closed afterwards. */
export async function withEgress<T>(
  options: Parameters<typeof createEgress>[0],
  fn: (egress: Egress) => Promise<T>,
): Promise<T> {
  const egress = createEgress(options);
  try {
    return await fn(egress);
  } finally {
    await egress.close();
  }
}

/** The SvcError a promise rejects with; fails the test when it resolves or throws something else. */
export async function failure(p: Promise<unknown>): Promise<SvcError> {
  try {
    await p;
  } catch (err) {
    if (SvcError.is(err)) return err;
    throw err;
  }
  throw new Error("expected a failure");
}
