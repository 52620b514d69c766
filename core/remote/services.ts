/**
 * What the remote room offers the rest of the daemon, and its injection token. Types only beside
 * the token, so that `svc serve` can ask for the room without loading it (room.ts is loaded on
 * first use), and tokens.ts need not know the room.
 */
import { token } from "../tokens.js";
import type { Identity } from "./identity.js";
import type { PairingService } from "./pairing/service.js";
import type { TunnelClient } from "./tunnel/tunnel-client.js";

export interface RemoteServices {
  identity: Identity;
  pairings: PairingService;
  tunnel?: TunnelClient;
  stop(): Promise<void>;
}

/** The remote room's services (core/remote): pairings and the tunnel. */
export const REMOTE = token<RemoteServices>("remote");
