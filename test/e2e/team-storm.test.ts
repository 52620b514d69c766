import { beforeAll, describe, expect, it } from "vitest";
import { postgresMissing } from "../support/postgres.js";
import { stormSize } from "../support/storm-size.js";
import { useTeam } from "../support/team.js";
import { until } from "../support/webhook-receiver.js";
import {
  createStormSentinels,
  deliveredPairs,
  expectStormOutcome,
  pendingRows,
  startStorm,
  type StormAnswers,
  stormAnswers,
} from "./team-storm.js";

const missing = postgresMissing();
if (missing) console.warn(missing);
const SECRET = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
const EVENTS = stormSize(2_000, 5_000);
const KILLS = stormSize(6, 10);

describe.skipIf(!!missing)("team mode: a delivery storm on two daemons with kill -9s", () => {
  const fx = useTeam(SECRET);
  let answers: StormAnswers;
  beforeAll(() => {
    answers = stormAnswers(fx.rx);
  });

  it(`${EVENTS} events pushed half to A and half to B, ${KILLS} kill -9s of either: every event delivered or dead with a reason, one row per (sentinel, event), the same bytes per webhook-id`, async () => {
    const { team, rx } = fx;
    const sentinels = await createStormSentinels(team, rx.url, SECRET);
    const storm = startStorm({ team, tag: "storm", sentinels, events: EVENTS, batch: 50, rejectEvery: 500 });
    const total = EVENTS;
    const kills: number[] = [];
    for (let k = 1; k <= KILLS; k++) {
      // Kill k when about k/(KILLS+1) of the deliveries arrived, at a random moment after that.
      await until(() => deliveredPairs(rx) >= (total * k) / (KILLS + 1), `delivery ${k}/${KILLS + 1}`, 300_000);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
      const victim = Math.floor(Math.random() * 2);
      kills.push(victim);
      await team.restart(victim);
    }
    await storm.done;
    await until(async () => (await pendingRows(team, sentinels)) === 0, "no pending row", 300_000);
    expect(kills).toHaveLength(KILLS);
    expect(team.alive(0) && team.alive(1)).toBe(true);
    await expectStormOutcome(team, rx, answers, sentinels, storm);
    expect(storm.rejected.size).toBe(EVENTS / 500);
  }, 600_000);
});
