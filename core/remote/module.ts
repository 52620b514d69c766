/**
 * The remote room in the daemon (pairings, standing links, the tunnel), loaded on first use: at
 * start only when there is something to keep open (a tunnel to dial, pairings to reconnect with
 * `pairing.autoconnect`), else by the first remote route called. A daemon nobody pairs with
 * never loads the identity, the crypto or the WebSocket code.
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { CLOCK, CONFIG, CREDENTIALS, HOME, resolve } from "../tokens.js";
import { PairingStore } from "./pairing/store.js";
import { addRemoteRoutes } from "./routes.js";
import type { RemoteServices } from "./room.js";
import type { LinkStatus } from "./pairing/standing-link.js";
import { tunnelSettings } from "./tunnel/settings.js";

export type { RemoteServices } from "./room.js";

/** Per container: the room, once something asked for it. */
const rooms = new WeakMap<DependencyContainer, Promise<RemoteServices>>();

/** Pairings with their link's state, and the tunnel's state, as `GET /status` shows them. */
export interface RemoteSummary {
  pairings: Array<{ id: string; label: string; role: "host" | "peer"; scope: string; link: LinkStatus }>;
  tunnel: { state: string; publicUrl?: string; lastError?: string };
}

/**
 * The remote room's state without loading it: a room nobody opened has no link up and no tunnel,
 * so its pairings are read from their file with their links `off`.
 */
export async function remoteSummary(c: DependencyContainer): Promise<RemoteSummary> {
  const room = await rooms.get(c)?.catch(() => undefined);
  const pairings = room
    ? await room.pairings.list()
    : (await new PairingStore(resolve(c, HOME), () => resolve(c, CLOCK).now()).list()).map((p) => ({
        ...p,
        link: { state: "off" as const, since: p.createdAt, attempts: 0 },
      }));
  const t = room?.tunnel?.status;
  return {
    pairings: pairings.map((p) => ({ id: p.id, label: p.label, role: p.role, scope: p.scope ?? "read", link: p.link })),
    tunnel: t
      ? {
          state: t.state,
          ...(t.publicUrl ? { publicUrl: t.publicUrl } : {}),
          ...(t.lastError ? { lastError: t.lastError } : {}),
        }
      : { state: "off" },
  };
}

export const remoteModule: DaemonModule = {
  name: "remote",
  async start(c: DependencyContainer) {
    const config = resolve(c, CONFIG);
    // Checked now, so a tunnel that cannot open (e2e without a token, no token at all) stops the start.
    const tunnel = await tunnelSettings(config.current(), resolve(c, CREDENTIALS));
    const room = () => {
      let r = rooms.get(c);
      if (!r) {
        r = import("./room.js").then((m) => m.openRoom(c, tunnel));
        rooms.set(c, r);
        r.catch(() => rooms.delete(c));
      }
      return r;
    };
    addRemoteRoutes(c, room);
    const reconnect =
      config.current().effective.pairing.autoconnect &&
      (await new PairingStore(resolve(c, HOME), () => resolve(c, CLOCK).now()).list()).length > 0;
    if (tunnel || reconnect) await room();
  },
  async stop(c: DependencyContainer) {
    const r = rooms.get(c);
    rooms.delete(c);
    await (await r?.catch(() => undefined))?.stop();
  },
};
