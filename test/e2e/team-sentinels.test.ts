import { describe, expect, it } from "vitest";
import { pushEvents } from "../support/agentpush.js";
import { postgresMissing } from "../support/postgres.js";
import { createWebhookSentinel, listedSentinels, useTeam } from "../support/team.js";
import { until } from "../support/webhook-receiver.js";

const missing = postgresMissing();
if (missing) console.warn(missing);
const SECRET = `whsec_${Buffer.alloc(32, 5).toString("base64")}`;

describe.skipIf(!!missing)("team mode: two daemons on one PostgreSQL share their sentinels", () => {
  const fx = useTeam(SECRET);

  it("a webhook sentinel created on A is listed on B, its secret usable there; removed on B, it leaves A", async () => {
    const { team, rx } = fx;
    const id = await createWebhookSentinel(team.daemon(0), { subject: "team:a", url: rx.url, secret: SECRET });
    await until(async () => (await listedSentinels(team.daemon(1))).includes(id), `sentinel ${id} listed on B`);

    // An event pushed to B is delivered, signed with the secret given to A.
    const event = { id: "evt_team_1", type: "team.item.made", subjects: ["team:a"], data: {} };
    expect(await pushEvents(team.daemon(1), [event])).toBe(200);
    await until(() => rx.deliveries.some((x) => x.id === event.id), "the event pushed to B delivered");
    expect(rx.unverified).toHaveLength(0);

    const removed = await team.daemon(1).fetch(`/sentinels/${id}`, { method: "DELETE" });
    expect(removed.status).toBeLessThan(300);
    await until(async () => !(await listedSentinels(team.daemon(0))).includes(id), `sentinel ${id} gone from A`);
  }, 120_000);
});
