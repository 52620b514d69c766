/** `svc sentinel rotate-secret <id> [--secret whsec_…|-]`: rotates a webhook sentinel's secret through the daemon. */
import { DaemonClient } from "../daemon-client.js";
import { printJson, println } from "../output.js";
import { secretFrom } from "../secret-input.js";

export interface RotateOptions {
  /** A `whsec_` secret, or `-` to read it from stdin; absent: the daemon generates one. */
  secret?: string;
  json?: boolean;
}

interface RotationResult {
  sentinelId: string;
  rotated: boolean;
  rotatedAt?: number;
  dualSignUntil?: number;
  secret?: string;
}

export async function rotateSecret(id: string, opts: RotateOptions): Promise<void> {
  const secret = await secretFrom(opts);
  const client = await DaemonClient.connect();
  const r = await client.request<RotationResult>(
    "POST",
    `/sentinels/${encodeURIComponent(id)}/rotate-secret`,
    secret === undefined ? {} : { secret },
  );
  if (opts.json) return printJson(r);
  if (!r.rotated) {
    println(`${id}: that secret is already current; nothing changed`);
    return;
  }
  if (r.secret) {
    println(`new secret for ${id} (shown once, store it with your receiver now):`);
    println(r.secret);
  } else {
    println(`${id}: secret rotated (verified by the callback's challenge)`);
  }
  println(`the previous secret also signs until ${new Date(r.dualSignUntil!).toISOString()}`);
}
