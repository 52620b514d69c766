/**
 * Every daemon of a team needs the same key (it seals the webhook secrets). The first daemon to
 * start seals a fixed text into `svc_team_key`; every later one must open it, or it refuses to
 * start (`store_key_mismatch`) before it could store a secret the others cannot read.
 */
import { SvcError } from "../../errors.js";
import type { TeamDatabase } from "../../plugin-api/team.js";

const PROBE = "svc team key check v1";

export async function checkTeamKey(db: TeamDatabase): Promise<void> {
  await db.query("INSERT INTO svc_team_key (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [db.seal(PROBE)]);
  const { rows } = await db.query<{ sealed: Buffer }>("SELECT sealed FROM svc_team_key WHERE id = 1");
  let opened: string | undefined;
  try {
    opened = db.unseal(rows[0]!.sealed);
  } catch {
    opened = undefined;
  }
  if (opened !== PROBE)
    throw new SvcError(
      "store_key_mismatch",
      "this daemon's team key is not the key the team's store was started with: every daemon of a team needs the same key (SVC_STORE_KEY, or the key file named by store.keyFile / SVC_STORE_KEY_FILE)",
    );
}
