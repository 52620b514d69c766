/**
 * A delivery storm with kill -9s: per round, a daemon on `home`, three pushers sending batches of
 * 8 events to agentpush (subject `storm:a`), a kill at a random moment after the first accepted
 * batch (test/e2e/webhook-crash.test.ts).
 */
import { pushEvents, stormEvent } from "../support/agentpush.js";
import type { DaemonProcess } from "../support/cli.js";
import { startDaemonProcess } from "../support/cli.js";

export interface KillStormOptions {
  home: string;
  rounds: number;
  /** Events pushed per daemon life at most. */
  perRound: number;
  /** The daemon the first round uses (else one is started). */
  daemon?: DaemonProcess;
  /** Told the ids of each batch the daemon answered 200 (accepted). */
  accepted?: (ids: string[]) => void;
}

export async function killStorm(opts: KillStormOptions): Promise<void> {
  let seq = 0;
  let d = opts.daemon;
  for (let round = 0; round < opts.rounds; round++) {
    const daemon = d ?? (await startDaemonProcess({ home: opts.home }));
    d = undefined;
    let stop = false;
    let firstAccepted: () => void = () => undefined;
    const armed = new Promise<void>((r) => (firstAccepted = r));
    const roundStart = seq;
    const pusher = async () => {
      while (!stop && seq - roundStart < opts.perRound) {
        const events = Array.from({ length: 8 }, () => stormEvent(round, seq++, { round }));
        try {
          if ((await pushEvents(daemon, events)) === 200) {
            opts.accepted?.(events.map((e) => e.id));
            firstAccepted();
          }
        } catch {
          return; // the daemon died mid-request: those events were not acknowledged
        }
      }
    };
    const pushers = [pusher(), pusher(), pusher()];
    await Promise.race([armed, new Promise((r) => setTimeout(r, 5_000))]);
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 400)));
    await daemon.kill9();
    stop = true;
    await Promise.all(pushers);
  }
}
