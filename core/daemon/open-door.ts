/**
 * The one warning about a daemon open to the network: bound beyond loopback with no
 * `daemon.authToken`. Callers there are let in without a token, but only to read (principal.ts:
 * `anonymous`); the owner is told at start (stderr and the log), in runtime.json (so `svc doctor`
 * and status views see the live daemon's state) and by `svc doctor` from config.json when none runs.
 */
import { isLoopbackBind } from "./origin-guard.js";

export function openDoorWarning(daemon: { bind: string; authToken?: string | undefined }): string | undefined {
  if (isLoopbackBind(daemon.bind) || daemon.authToken) return undefined;
  return (
    `daemon.bind is ${daemon.bind} (beyond loopback) and daemon.authToken is not set: anyone who can reach this port may read ` +
    `sessions, transcripts, sentinels and configuration (secrets redacted) without a token, though not start, prompt or stop anything. ` +
    `Set daemon.authToken (svc config set daemon.authToken < token-file) or bind to 127.0.0.1`
  );
}
