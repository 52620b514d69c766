/**
 * The initiating end of a channel (a `pair accept`, a paired CLI, the pair page): joins the
 * broker channel, waits for the daemon, runs the handshake and returns the open channel.
 */
import { SecureChannel } from "./channel.js";
import { HandshakeError, initiate, type SessionKeys } from "./handshake.js";
import type { Bytes } from "./bytes.js";
import type { KeyPair } from "./primitives.js";
import { channelUrl, RendezvousSocket, type WsFactory } from "./rendezvous.js";

export interface PeerOptions {
  factory: WsFactory;
  rendezvous: string;
  channel: string;
  prologue: string;
  psk: Bytes;
  staticKey: KeyPair;
  remoteStatic: Bytes;
  meta: unknown;
  timeoutMs?: number;
  /** How long to wait for the daemon to be on the channel (default: timeoutMs). */
  joinTimeoutMs?: number;
  /** Called once this end is on the broker channel, before the daemon joins, with its socket (closing it abandons the attempt). */
  onJoined?: (socket: RendezvousSocket) => void;
  /** Fail at once when the daemon is not on the channel (accepting an offer), instead of waiting. */
  mustFind?: boolean;
}

export interface PeerLink {
  channel: SecureChannel;
  keys: SessionKeys;
  /** What the daemon said about itself in the handshake. */
  meta: unknown;
  socket: RendezvousSocket;
}

export async function connectAsPeer(o: PeerOptions): Promise<PeerLink> {
  const timeoutMs = o.timeoutMs ?? 15_000;
  const socket = await RendezvousSocket.open(
    o.factory,
    channelUrl(o.rendezvous, o.channel, "peer", o.mustFind),
    timeoutMs,
  );
  try {
    o.onJoined?.(socket);
    await socket.waitFor("paired", o.joinTimeoutMs ?? timeoutMs);
    const hs = await initiate({
      prologue: o.prologue,
      psk: o.psk,
      staticKey: o.staticKey,
      remoteStatic: o.remoteStatic,
      meta: o.meta,
    });
    const answer = new Promise<Bytes>((resolve, reject) => {
      socket.onControl = (e) => {
        // `refused`: the relay closed this end at the daemon's request; `peer-left`: the daemon left.
        if (e === "peer-left" || e === "refused")
          reject(
            new HandshakeError(
              "the daemon dropped the handshake: it did not accept this end's key or secret (a wrong peer key, an altered, used or expired offer, or a pairing removed on its side)",
            ),
          );
      };
      socket.nextFrame(timeoutMs).then(resolve, reject);
    });
    socket.send(hs.msg1);
    const { keys, meta } = await hs.finish(await answer);
    const channel = new SecureChannel(keys, (f) => socket.send(f));
    socket.takeFrames((f) => void channel.receive(f).catch(() => socket.close("frame failed authentication")));
    socket.onControl = (e) => {
      if (e === "peer-left") channel.fail("the daemon left the broker channel");
    };
    socket.onClose = (r) => channel.fail(`the broker connection closed: ${r}`);
    return { channel, keys, meta, socket };
  } catch (err) {
    socket.close("handshake failed");
    throw err;
  }
}
