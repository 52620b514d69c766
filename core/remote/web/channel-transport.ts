/**
 * The dashboard's transport through a pairing (the pair page): REST calls as requests over the
 * encrypted channel, the daemon's `/events` as a stream on the same channel, and a fresh link
 * when the one in use is lost (the relay restarted, the tab slept). The daemon authorizes every
 * request as the pairing, by its scope; `scope` only tells the page which controls to show.
 */
import type {
  DashboardEvent,
  DashboardResponse,
  DashboardScope,
  DashboardTransport,
} from "../../dashboard/web/transport.js";
import { ChannelError, type RemoteRequest, type StreamHandle } from "./channel.js";
import type { PeerLink } from "./peer.js";

export type LinkState = "connected" | "reconnecting";

export interface ChannelTransportOptions {
  label: string;
  /** The link open now. */
  link: PeerLink;
  /** Opens a new link to the same daemon (same pairing, a new handshake). */
  reconnect(): Promise<PeerLink>;
  /** The scope when the daemon's handshake does not say one. */
  scope: "read" | "operate";
  /** First delay before following the events again after the stream ended; doubles up to 15 s. */
  retryMs?: number;
  /** Told when the event stream is followed again, or lost. */
  onState?(state: LinkState, detail?: string): void;
}

const MAX_RETRY_MS = 15_000;

/** The scope the daemon said in a link's handshake (it says the pairing's current one at each link). */
function scopeOf(meta: unknown, fallback: "read" | "operate"): "read" | "operate" {
  const s = (meta as { scope?: unknown } | null | undefined)?.scope;
  return s === "operate" || s === "read" ? s : fallback;
}

export class ChannelTransport implements DashboardTransport {
  readonly label: string;
  private current: Promise<PeerLink>;
  private scopeNow: "read" | "operate";
  /** The last event id seen, sent as `Last-Event-ID` when the stream is opened again. */
  private lastId?: string;

  constructor(private readonly o: ChannelTransportOptions) {
    this.label = o.label;
    this.current = Promise.resolve(o.link);
    this.scopeNow = scopeOf(o.link.meta, o.scope);
  }

  get scope(): DashboardScope {
    return this.scopeNow;
  }

  async request(method: string, path: string, body?: unknown): Promise<DashboardResponse> {
    const r: RemoteRequest = {
      method,
      path,
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { "content-type": "application/json" } } : {}),
    };
    try {
      return await (await this.live()).channel.request(r);
    } catch (err) {
      // A read is sent again on a new link; anything else may have been done, so the caller decides.
      if (!(err instanceof ChannelError) || method !== "GET") throw err;
      return (await this.live()).channel.request(r);
    }
  }

  /** Every subscriber shares one `/events` stream on the link, opened by the first and ended with the last. */
  subscribe(onEvent: (e: DashboardEvent) => void): () => void {
    this.listeners.add(onEvent);
    if (this.listeners.size === 1) void this.follow();
    return () => {
      this.listeners.delete(onEvent);
      if (this.listeners.size === 0) this.stopFollowing?.();
    };
  }

  private readonly listeners = new Set<(e: DashboardEvent) => void>();
  private stopFollowing?: () => void;

  /** Follows `/events` while anyone listens: after a lost link or an `overflow`, again from the last event id. */
  private async follow(): Promise<void> {
    let stopped = false;
    let handle: StreamHandle | undefined;
    let wake: (() => void) | undefined;
    this.stopFollowing = () => ((stopped = true), handle?.cancel(), wake?.());
    let failures = 0;
    while (!stopped) {
      let why: string;
      try {
        const link = await this.live();
        if (stopped) break;
        handle = link.channel.stream(
          {
            method: "GET",
            path: "/events",
            ...(this.lastId !== undefined ? { headers: { "last-event-id": this.lastId } } : {}),
          },
          {
            onOpen: () => ((failures = 0), this.o.onState?.("connected")),
            onEvent: (e) => {
              if (e.id !== undefined) this.lastId = e.id;
              const event = { type: e.event, data: parseData(e.data) };
              for (const l of [...this.listeners]) l(event);
            },
          },
        );
        const end = await handle.done;
        why = end.status >= 400 ? `the daemon answered ${end.status}: ${end.body.slice(0, 200)}` : endReason(end.body);
      } catch (err) {
        why = (err as Error).message;
      }
      if (stopped) break;
      this.o.onState?.("reconnecting", why);
      const delay = Math.min((this.o.retryMs ?? 500) * 2 ** failures++, MAX_RETRY_MS);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => (clearTimeout(timer), resolve());
      });
    }
  }

  /** The link in use, or a new one when it was lost (one reconnection shared by every caller). */
  private async live(): Promise<PeerLink> {
    const p = this.current;
    const link = await p.catch(() => undefined);
    if (link && link.channel.closedReason === undefined) return link;
    if (this.current === p) {
      link?.socket.close("link lost");
      this.current = this.o.reconnect();
      this.current.then(
        (l) => (this.scopeNow = scopeOf(l.meta, this.scopeNow)),
        () => undefined,
      );
    }
    return this.current;
  }
}

function parseData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

function endReason(body: string): string {
  try {
    return String((JSON.parse(body) as { ended?: unknown }).ended ?? "the stream ended");
  } catch {
    return "the stream ended";
  }
}
