import { beforeAll, describe, expect, it } from "vitest";
import { pushEvents } from "../support/agentpush.js";
import { postgresMissing } from "../support/postgres.js";
import { type Team, useTeam } from "../support/team.js";
import { until } from "../support/webhook-receiver.js";
import {
  createStormSentinels,
  expectStormOutcome,
  pendingRows,
  startStorm,
  type StormAnswers,
  stormAnswers,
  stormEventOf,
} from "./team-storm.js";

const missing = postgresMissing();
if (missing) console.warn(missing);
const SECRET = `whsec_${Buffer.alloc(32, 8).toString("base64")}`;
const EVENTS = 1_500;

// On a timeout, the rows still pending are printed with their jobs (run_at, attempts, lock) and the
// daemons' last log lines: what the safety nets of docs/team-mode.md "When something fails" missed.
describe("team mode: PostgreSQL restarted in the middle of a storm", () => {
  const fx = useTeam(SECRET);
  let answers: StormAnswers;
  beforeAll(() => {
    answers = stormAnswers(fx.rx);
  });

  it("pushes during the outage get 503 (never 500); after the restart the daemons reconnect and nothing accepted is lost", async () => {
    const { team, rx, server } = fx;
    const sentinels = await createStormSentinels(team, rx.url, SECRET);
    const storm = startStorm({ team, tag: "pgr", sentinels, events: EVENTS, batch: 25, rejectEvery: 300 });
    await until(() => storm.accepted.size >= EVENTS / 3, "a third of the events accepted", 300_000);
    await server.stop("fast");
    // A push to either daemon while PostgreSQL is down: refused for now, as a 503 the pusher retries.
    const probes = [0, 1].map((i) => stormEventOf({ tag: "outage", sentinels, rejectEvery: 1e9 }, i + 1));
    for (const i of [0, 1]) {
      const status = await pushEvents(team.daemon(i), [probes[i]!]).catch((err: Error) => {
        const tail = team.daemon(i).logs().split("\n").slice(-40).join("\n");
        throw new Error(
          `daemon ${i} (alive: ${team.alive(i)}) failed a push during the outage: ${err.message}\n${tail}`,
        );
      });
      expect(status, `daemon ${i} during the outage`).toBe(503);
    }
    await server.start();
    for (const i of [0, 1]) {
      await until(
        async () => (await pushEvents(team.daemon(i), [probes[i]!])) === 200,
        `daemon ${i} accepting again`,
        120_000,
      );
      storm.accepted.set(probes[i]!.id, sentinels[(i + 1) % sentinels.length]!);
    }
    await storm.done;
    await until(async () => (await pendingRows(team, sentinels)) === 0, "no pending row", 300_000).catch(
      async (err: Error) => {
        throw new Error(`${err.message}\n${await whyPending(team)}`);
      },
    );
    // Which safety net acted, if any (docs/team-mode.md "When something fails"): printed, not asserted.
    for (const i of [0, 1]) {
      const acted = team
        .daemon(i)
        .logs()
        .split("\n")
        .filter((l) => /starting it again|were overdue/.test(l));
      if (acted.length > 0) console.log(`daemon ${i}'s safety nets:\n${acted.join("\n")}`);
    }
    expect(team.alive(0) && team.alive(1), "both daemons lived through the outage").toBe(true);
    const statuses = Object.fromEntries(storm.answers);
    expect(
      Object.keys(statuses).filter((a) => a !== "200" && a !== "503"),
      JSON.stringify(statuses),
    ).toEqual([]);
    await expectStormOutcome(team, rx, answers, sentinels, storm);
  }, 600_000);
});

/** The rows still pending with their jobs, and each daemon's last log lines. */
async function whyPending(team: Team): Promise<string> {
  const stuck = await team.sql(
    `SELECT o.request_id, o.attempts, o.last_error, o.last_at, o.updated_at, j.run_at, j.attempts AS job_attempts,
       j.locked_at, j.locked_by, j.last_error AS job_error, now() AS db_now
     FROM webhook_outbox o LEFT JOIN graphile_worker._private_jobs j ON j.key = o.request_id
     WHERE o.status = 'pending' ORDER BY o.created_at LIMIT 30`,
  );
  const tail = (i: number) => team.daemon(i).logs().split("\n").slice(-60).join("\n");
  return [JSON.stringify(stuck, null, 1), "daemon 0:", tail(0), "daemon 1:", tail(1)].join("\n");
}
