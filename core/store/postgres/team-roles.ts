/**
 * The team-mode side of the leadership module (loaded with `import()` only in team mode): this
 * daemon's leases on `svc_leases`, and its row of `svc_daemons` with the heartbeat and the
 * dead-daemon sweep (run by the holder of `team:daemon-sweep`).
 */
import type { Leadership, TeamDatabase } from "../../plugin-api/team.js";
import type { Logger } from "../../runtime/logger.js";
import { SVC_VERSION } from "../../version.js";
import { DaemonRoll } from "./daemons.js";
import { PostgresLeadership } from "./leases.js";

export interface TeamRoles {
  leadership: Leadership;
  stop(): Promise<void>;
}

export async function startTeamRoles(db: TeamDatabase, logger: Logger): Promise<TeamRoles> {
  const leadership = new PostgresLeadership({ sql: db, holder: db.daemonId, logger });
  const roll = new DaemonRoll({ db, sweepLease: leadership.lease("team:daemon-sweep"), logger, version: SVC_VERSION });
  try {
    await roll.start();
  } catch (err) {
    await leadership.close();
    throw err;
  }
  return {
    leadership,
    async stop() {
      await roll.stop();
      await leadership.close();
    },
  };
}
