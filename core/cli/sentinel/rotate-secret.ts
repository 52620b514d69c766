/** `svc sentinel rotate-secret <id> [--secret [-] | --secret-file <path> | --secret-env <VAR>]`: rotates a webhook sentinel's secret through the daemon. */
import { DaemonClient } from "../daemon-client.js";
import { printJson, println } from "../output.js";
import { type PrivateSecretFlags, privateSecretFrom } from "../secret-input.js";

/** Where the new secret comes from (never the command line); none given: the daemon generates one. */
export interface RotateOptions extends PrivateSecretFlags {
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
  const secret = await privateSecretFrom(opts, "new webhook secret");
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
