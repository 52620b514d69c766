/**
 * The remote room itself, loaded on first use (module.ts): the identity, the pairings with their
 * standing links, and the tunnel. Requests arriving through a link or the tunnel are sent to the
 * daemon's own listener as forwarded requests (loopback-forward.ts).
 */
import type { DependencyContainer } from "tsyringe";
import { CLOCK, CONFIG, DAEMON_EVENTS, HOME, LISTEN, LOGGER, resolve } from "../tokens.js";
import { registerValue } from "../runtime/inject.js";
import { loadIdentity } from "./identity.js";
import { makeForwarder } from "./loopback-forward.js";
import { PairingService } from "./pairing/service.js";
import { PairingStore } from "./pairing/store.js";
import { TunnelClient } from "./tunnel/tunnel-client.js";
import type { TunnelSettings } from "./tunnel/settings.js";
import { REMOTE, type RemoteServices } from "./services.js";

export type { RemoteServices } from "./services.js";

export async function openRoom(c: DependencyContainer, tunnel: TunnelSettings | undefined): Promise<RemoteServices> {
  const home = resolve(c, HOME);
  const config = resolve(c, CONFIG);
  const logger = resolve(c, LOGGER).child({ room: "remote" });
  const clock = resolve(c, CLOCK);
  const listen = resolve(c, LISTEN);
  const identity = await loadIdentity(home);
  const log = (msg: string, fields?: Record<string, unknown>) => logger.info(msg, fields as never);
  const pairings: PairingService = new PairingService({
    identity,
    store: new PairingStore(home, () => clock.now()),
    now: () => clock.now(),
    log,
    serve: (id: string) =>
      makeForwarder(
        () => listen,
        () => ({ kind: "pairing", pairingId: id, scope: pairings.scopeOf(id) }),
      ),
    autoconnect: () => config.current().effective.pairing.autoconnect,
  });
  await pairings.start();
  const client =
    tunnel &&
    new TunnelClient({
      ...tunnel,
      identity,
      forward: {
        plain: makeForwarder(
          () => listen,
          () => ({ kind: "tunnel" }),
        ),
        sealed: makeForwarder(
          () => listen,
          () => ({ kind: "sealed" }),
        ),
      },
      log,
      events: resolve(c, DAEMON_EVENTS),
      now: () => clock.now(),
    });
  client?.start();
  const services: RemoteServices = {
    identity,
    pairings,
    ...(client ? { tunnel: client } : {}),
    async stop() {
      pairings.stop();
      await client?.stop();
    },
  };
  registerValue(c, REMOTE, services);
  return services;
}
