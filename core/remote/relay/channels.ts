/**
 * Rendezvous channels: two ends (the daemon as `host`/`offer`, the other as `peer`) matched by
 * channel id. The relay forwards binary frames it cannot read, queues a bounded number for an
 * end not there yet, and tells each end in text frames when the other joins or leaves. The one
 * text frame an end may send is the daemon's `{"relay":"drop-peer"}`: it refused the peer's
 * handshake, so the relay closes that peer and frees the channel for the next one.
 */
import type { WebSocket } from "ws";
import type { RelayLimits } from "./limits.js";

export type Side = "host" | "peer";

interface End {
  ws: WebSocket;
}

interface Channel {
  host?: End;
  peer?: End;
  /** Frames sent by one end before the other joined, keyed by the sender's side. */
  queued: { host: Buffer[]; peer: Buffer[] };
  queuedBytes: { host: number; peer: number };
}

const control = (relay: string, message?: string) => JSON.stringify(message ? { relay, message } : { relay });

/** The daemon's request to close the peer whose handshake it refused. */
export const DROP_PEER = JSON.stringify({ relay: "drop-peer" });

export class ChannelTable {
  private readonly channels = new Map<string, Channel>();

  constructor(
    private readonly limits: RelayLimits,
    private readonly tap?: (frame: Buffer, channel: string) => void,
  ) {}

  get size(): number {
    return this.channels.size;
  }

  /** `mustFind`: a peer that only wants a daemon already there (an offer being accepted) is told at once when none is. */
  join(id: string, side: Side, ws: WebSocket, mustFind = false): void {
    if (mustFind && side === "peer" && !this.channels.get(id)?.host) {
      ws.send(control("error", "no daemon is waiting on this channel: the offer was used, expired or withdrawn"));
      ws.close(4404, "no daemon waiting");
      return;
    }
    let ch = this.channels.get(id);
    if (!ch) {
      ch = { queued: { host: [], peer: [] }, queuedBytes: { host: 0, peer: 0 } };
      this.channels.set(id, ch);
    }
    const current = ch[side];
    if (current) {
      if (side === "peer") {
        ws.send(control("error", "channel busy: another client is connected to this pairing"));
        ws.close(4409, "channel busy");
        return;
      }
      // A reconnecting daemon replaces its stale connection.
      current.ws.close(4000, "replaced by a new connection");
    }
    const end: End = { ws };
    ch[side] = end;
    const other = side === "host" ? "peer" : "host";
    ws.on("message", (data: Buffer, isBinary: boolean) => this.forward(id, side, end, data, isBinary));
    ws.on("close", () => this.leave(id, side, end));
    if (ch[other]) {
      for (const e of [ch.host!, ch.peer!]) e.ws.send(control("paired"));
      this.flush(id, ch, other, side);
    } else {
      ws.send(control("waiting"));
    }
  }

  private forward(id: string, from: Side, sender: End, data: Buffer, isBinary: boolean): void {
    const ch = this.channels.get(id);
    // An end already replaced or dropped: nothing it sends is forwarded any more.
    if (!ch || ch[from] !== sender) return;
    if (!isBinary) {
      if (from === "host" && data.toString("utf8") === DROP_PEER) return this.dropPeer(id, ch);
      sender.ws.close(1003, "only binary frames are relayed");
      return;
    }
    const to = from === "host" ? "peer" : "host";
    const receiver = ch[to];
    if (receiver) {
      if (receiver.ws.bufferedAmount > this.limits.maxBufferedBytes) {
        receiver.ws.close(1013, "slow consumer");
        sender.ws.close(1013, "the other end is not reading");
        return;
      }
      this.tap?.(data, id);
      receiver.ws.send(data, { binary: true });
      return;
    }
    if (
      ch.queued[from].length >= this.limits.maxQueueFrames ||
      ch.queuedBytes[from] + data.length > this.limits.maxQueueBytes
    ) {
      sender.ws.close(1008, "queue full: the other end has not joined");
      return;
    }
    ch.queued[from].push(data);
    ch.queuedBytes[from] += data.length;
  }

  /** Closes the channel's peer (the daemon refused its handshake); the daemon stays, waiting for the next. */
  private dropPeer(id: string, ch: Channel): void {
    const peer = ch.peer;
    if (!peer) return;
    peer.ws.send(control("refused", "the daemon refused this end's handshake"));
    peer.ws.close(4403, "handshake refused by the daemon");
    // Free the channel now, not when that end completes its close (it may never answer).
    this.leave(id, "peer", peer);
  }

  /** Sends what `from` queued to `to` (who just joined). */
  private flush(id: string, ch: Channel, from: Side, to: Side): void {
    const receiver = ch[to]!;
    for (const f of ch.queued[from]) {
      this.tap?.(f, id);
      receiver.ws.send(f, { binary: true });
    }
    ch.queued[from] = [];
    ch.queuedBytes[from] = 0;
  }

  private leave(id: string, side: Side, end: End): void {
    const ch = this.channels.get(id);
    if (!ch || ch[side] !== end) return;
    delete ch[side];
    ch.queued[side] = [];
    ch.queuedBytes[side] = 0;
    const other = ch[side === "host" ? "peer" : "host"];
    if (other) other.ws.send(control("peer-left"));
    else this.channels.delete(id);
  }
}
