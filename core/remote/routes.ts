/** The remote room's routes; each loads the room (`room()`) only when called. */
import { hostname } from "node:os";
import type { DependencyContainer } from "tsyringe";
import { authorize } from "../daemon/authorization.js";
import { SvcError } from "../errors.js";
import { pairingSettings, rendezvousForOffer } from "../config/pairing.js";
import { CONFIG, ROUTES, resolve } from "../tokens.js";
import { parseOfferRequest } from "./pairing/offer-request.js";
import type { RemoteServices } from "./room.js";
import { toB64u } from "./web/bytes.js";

export function addRemoteRoutes(c: DependencyContainer, room: () => Promise<RemoteServices>): void {
  const config = resolve(c, CONFIG);
  const routes = resolve(c, ROUTES);
  type Handler = Parameters<typeof routes.add>[0]["handler"];
  const add = (method: "GET" | "POST" | "DELETE", path: string, handler: Handler) =>
    routes.add({ method, path, auth: "loopback-or-token", handler });
  add("GET", "/pairings", async () => ({ status: 200, body: { pairings: await (await room()).pairings.list() } }));
  add("GET", "/remote/status", async () => {
    const r = await room();
    return {
      status: 200,
      body: {
        fingerprint: r.identity.fingerprint,
        publicKey: toB64u(r.identity.key.publicKey),
        pairings: await r.pairings.list(),
        tunnel: r.tunnel?.status ?? { state: "off" },
      },
    };
  });
  add("POST", "/pairing/offers", async (req) => {
    authorize("pairing.offer", req.principal);
    const b = parseOfferRequest(req.json());
    const broker = rendezvousForOffer(config.current().effective, b.rendezvous);
    const offer = await (await room()).pairings.offer(broker, b.ttlMs, b.label ?? hostname(), b.scope);
    return { status: 201, body: { ...offer, pairPage: pairingSettings(config.current().effective).pairPage } };
  });
  add("POST", "/pairing/accept", async (req) => {
    authorize("pairing.accept", req.principal);
    const b = (req.json() ?? {}) as { offer?: unknown; label?: unknown };
    if (typeof b.offer !== "string")
      throw new SvcError("invalid_input", "offer must be the svc://pair?… text from `svc pair offer`");
    return {
      status: 201,
      body: await (await room()).pairings.accept(b.offer, typeof b.label === "string" ? b.label : undefined),
    };
  });
  add("POST", "/pairings/:id/scope", async (req) => {
    authorize("pairing.scope", req.principal);
    const b = (req.json() ?? {}) as { scope?: unknown };
    if (b.scope !== "read" && b.scope !== "operate")
      throw new SvcError("invalid_input", `scope must be "read" or "operate" (got ${JSON.stringify(b.scope)})`);
    return { status: 200, body: await (await room()).pairings.setScope(req.params.id!, b.scope) };
  });
  add("DELETE", "/pairings/:id", async (req) => {
    authorize("pairing.remove", req.principal);
    await (await room()).pairings.remove(req.params.id!);
    return { status: 200, body: { removed: req.params.id } };
  });
  add("POST", "/pairings/:id/request", async (req) => {
    authorize("pairing.call", req.principal);
    const b = (req.json() ?? {}) as {
      method?: unknown;
      path?: unknown;
      body?: unknown;
      headers?: unknown;
      timeoutMs?: unknown;
    };
    if (typeof b.method !== "string" || typeof b.path !== "string")
      throw new SvcError("invalid_input", "method and path are required");
    const r = await (await room()).pairings.call(
      req.params.id!,
      {
        method: b.method,
        path: b.path,
        ...(typeof b.body === "string" ? { body: b.body } : {}),
        ...(b.headers && typeof b.headers === "object" ? { headers: b.headers as Record<string, string> } : {}),
      },
      typeof b.timeoutMs === "number" && b.timeoutMs > 0 ? Math.min(b.timeoutMs, 3_600_000) : 60_000,
    );
    return { status: 200, body: r };
  });
}
