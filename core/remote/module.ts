/**
 * The remote room in the daemon: the identity, the pairings with their standing links, the
 * tunnel, and their routes. Requests arriving through a link or the tunnel are sent to the
 * daemon's own listener as forwarded requests (loopback-forward.ts).
 */
import { hostname } from "node:os";
import type { DependencyContainer } from "tsyringe";
import { authorize } from "../daemon/authorization.js";
import type { DaemonModule } from "../daemon/module.js";
import { SvcError } from "../errors.js";
import { pairingSettings, rendezvousForOffer } from "../config/pairing.js";
import { CLOCK, CONFIG, CREDENTIALS, DAEMON_EVENTS, HOME, LISTEN, LOGGER, REMOTE, ROUTES, resolve } from "../tokens.js";
import { registerValue } from "../runtime/inject.js";
import { loadIdentity, type Identity } from "./identity.js";
import { makeForwarder } from "./loopback-forward.js";
import { parseOfferRequest } from "./pairing/offer-request.js";
import { PairingService } from "./pairing/service.js";
import { PairingStore } from "./pairing/store.js";
import { toB64u } from "./web/bytes.js";
import { TunnelClient, tunnelSettings } from "./tunnel/tunnel-client.js";

export interface RemoteServices {
  identity: Identity;
  pairings: PairingService;
  tunnel?: TunnelClient;
}

export const remoteModule: DaemonModule = {
  name: "remote",
  async start(c: DependencyContainer) {
    const home = resolve(c, HOME);
    const config = resolve(c, CONFIG);
    const logger = resolve(c, LOGGER).child({ room: "remote" });
    const clock = resolve(c, CLOCK);
    const listen = resolve(c, LISTEN);
    const identity = await loadIdentity(home);
    const store = new PairingStore(home, () => clock.now());
    const log = (msg: string, fields?: Record<string, unknown>) => logger.info(msg, fields as never);
    const pairings = new PairingService({
      identity,
      store,
      now: () => clock.now(),
      log,
      serve: (id) => makeForwarder(() => listen, `pairing-${id}`),
      autoconnect: () => config.current().effective.pairing.autoconnect,
    });
    await pairings.start();
    const services: RemoteServices = { identity, pairings };
    const t = await tunnelSettings(config.current(), resolve(c, CREDENTIALS));
    if (t) {
      services.tunnel = new TunnelClient({ ...t, identity, forward: makeForwarder(() => listen, "tunnel"), log, events: resolve(c, DAEMON_EVENTS), now: () => clock.now() });
      services.tunnel.start();
    }
    registerValue(c, REMOTE, services);
    const routes = resolve(c, ROUTES);
    routes.add({
      method: "GET",
      path: "/pairings",
      auth: "loopback-or-token",
      handler: async () => ({ status: 200, body: { pairings: await pairings.list() } }),
    });
    routes.add({
      method: "GET",
      path: "/remote/status",
      auth: "loopback-or-token",
      handler: async () => ({
        status: 200,
        body: { fingerprint: identity.fingerprint, publicKey: toB64u(identity.key.publicKey), pairings: await pairings.list(), tunnel: services.tunnel?.status ?? { state: "off" } },
      }),
    });
    routes.add({
      method: "POST",
      path: "/pairing/offers",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("pairing.offer", req.principal);
        const b = parseOfferRequest(req.json());
        const broker = rendezvousForOffer(config.current().effective, b.rendezvous);
        const offer = await pairings.offer(broker, b.ttlMs, b.label ?? hostname());
        return { status: 201, body: { ...offer, pairPage: pairingSettings(config.current().effective).pairPage } };
      },
    });
    routes.add({
      method: "POST",
      path: "/pairing/accept",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("pairing.accept", req.principal);
        const b = (req.json() ?? {}) as { offer?: unknown; label?: unknown };
        if (typeof b.offer !== "string") throw new SvcError("invalid_input", "offer must be the svc://pair?… text from `svc pair offer`");
        return { status: 201, body: await pairings.accept(b.offer, typeof b.label === "string" ? b.label : undefined) };
      },
    });
    routes.add({
      method: "DELETE",
      path: "/pairings/:id",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("pairing.remove", req.principal);
        await pairings.remove(req.params.id!);
        return { status: 200, body: { removed: req.params.id } };
      },
    });
    routes.add({
      method: "POST",
      path: "/pairings/:id/request",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("pairing.call", req.principal);
        const b = (req.json() ?? {}) as { method?: unknown; path?: unknown; body?: unknown; headers?: unknown; timeoutMs?: unknown };
        if (typeof b.method !== "string" || typeof b.path !== "string") throw new SvcError("invalid_input", "method and path are required");
        const r = await pairings.call(req.params.id!, {
          method: b.method,
          path: b.path,
          ...(typeof b.body === "string" ? { body: b.body } : {}),
          ...(b.headers && typeof b.headers === "object" ? { headers: b.headers as Record<string, string> } : {}),
        }, typeof b.timeoutMs === "number" && b.timeoutMs > 0 ? Math.min(b.timeoutMs, 3_600_000) : 60_000);
        return { status: 200, body: r };
      },
    });
  },
  async stop(c: DependencyContainer) {
    if (!c.isRegistered(REMOTE)) return;
    const r = resolve(c, REMOTE);
    r.pairings.stop();
    await r.tunnel?.stop();
  },
};
