/**
 * Who may open a WebSocket on the relay, decided before the upgrade: the join rates per client
 * address and role, the connection slots per address, and the slots kept for authenticated
 * tunnels. A slot is taken at admission (an upgrade in flight counts) and given back when its
 * socket closes, however it closes.
 */
import type { Socket } from "node:net";
import { RateLimiter, type RelayLimits } from "./limits.js";

export type Refusal = { status: 429 | 503; reason: string; message: string };

export type ChannelRole = "offer" | "host" | "peer";

export class Admission {
  private total = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly joins: Record<ChannelRole, RateLimiter>;

  constructor(
    private readonly limits: RelayLimits,
    now: () => number,
  ) {
    this.joins = {
      offer: new RateLimiter(limits.offersPerMinute, now),
      host: new RateLimiter(limits.hostJoinsPerMinute, now),
      peer: new RateLimiter(limits.peerJoinsPerMinute, now),
    };
  }

  /** Connections admitted and not yet closed (upgrades in flight included). */
  get connections(): number {
    return this.total;
  }

  /** A channel connection (no credential): its role's join rate, its address's share, the unreserved slots. */
  channel(key: string, role: ChannelRole, socket: Socket): Refusal | undefined {
    const unreserved = this.limits.maxConnections - this.limits.reservedHostConnections;
    if (this.total >= unreserved) {
      return {
        status: 503,
        reason: "connection limit",
        message: `relay at its connection limit: ${unreserved} channel connections are open (${this.limits.reservedHostConnections} more are kept for tunnels)`,
      };
    }
    const held = this.perAddress.get(key) ?? 0;
    if (held >= this.limits.maxConnectionsPerAddress) {
      return {
        status: 429,
        reason: "connections per address",
        message: `at most ${this.limits.maxConnectionsPerAddress} connections from one address (${key})`,
      };
    }
    if (!this.joins[role].take(key)) {
      const per = {
        offer: this.limits.offersPerMinute,
        host: this.limits.hostJoinsPerMinute,
        peer: this.limits.peerJoinsPerMinute,
      }[role];
      return {
        status: 429,
        reason: `${role} rate`,
        message:
          role === "offer"
            ? `at most ${per} offers per minute`
            : `at most ${per} role=${role} joins per minute from one address`,
      };
    }
    this.hold(socket, key);
    return undefined;
  }

  /** A tunnel whose daemon presented a valid token: any slot, the reserved ones included; no per-address share. */
  tunnel(socket: Socket): Refusal | undefined {
    if (this.total >= this.limits.maxConnections) {
      return {
        status: 503,
        reason: "connection limit",
        message: `relay at its connection limit (${this.limits.maxConnections} connections)`,
      };
    }
    this.hold(socket);
    return undefined;
  }

  private hold(socket: Socket, key?: string): void {
    this.total++;
    if (key !== undefined) this.perAddress.set(key, (this.perAddress.get(key) ?? 0) + 1);
    socket.once("close", () => {
      this.total--;
      if (key === undefined) return;
      const left = (this.perAddress.get(key) ?? 1) - 1;
      if (left > 0) this.perAddress.set(key, left);
      else this.perAddress.delete(key);
    });
  }
}
