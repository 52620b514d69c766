/**
 * A daemon open to the network: bound beyond loopback with no `daemon.authToken`. It does not
 * start (`svc serve` exits non-zero with the fix, and `svc doctor` says so from config.json), since
 * anyone who could reach the port would read sessions, transcripts and sentinels without a token.
 * A daemon that started with a token keeps it while it runs if the token is then unset
 * (daemon.ts), and says so ({@link keptTokenWarning}).
 */
import { isLoopbackBind } from "./host-names.js";

interface DaemonDoor {
  bind: string;
  authToken?: string | undefined;
}

const FIX =
  "set daemon.authToken (svc config set daemon.authToken < token-file, a long random token; or svc serve --auth-token-file <path>) " +
  "or bind to loopback (svc config set daemon.bind 127.0.0.1)";

/** Bound beyond loopback, and no stable token to ask of the network's callers. */
function isOpenDoor(daemon: DaemonDoor): boolean {
  return !isLoopbackBind(daemon.bind) && !daemon.authToken;
}

/** Why a daemon configured so does not start, with the fix; undefined when it may. */
export function openDoorRefusal(daemon: DaemonDoor): string | undefined {
  if (!isOpenDoor(daemon)) return undefined;
  return (
    `daemon.bind is ${daemon.bind} (beyond loopback) and daemon.authToken is not set: the daemon does not start open to the network, ` +
    `where anyone who can reach this port could read sessions, transcripts and sentinels without a token. To start it, ${FIX}`
  );
}

/** The warning of a running daemon bound beyond loopback whose configured token was unset after it started. */
export function keptTokenWarning(daemon: DaemonDoor): string | undefined {
  if (!isOpenDoor(daemon)) return undefined;
  return (
    `daemon.authToken was unset while the daemon is bound to ${daemon.bind} (beyond loopback): it keeps asking for the token it ` +
    `started with until it stops, and will not start again without one. ${FIX[0]!.toUpperCase()}${FIX.slice(1)}`
  );
}
