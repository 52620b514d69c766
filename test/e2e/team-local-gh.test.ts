import { beforeAll, describe, expect, it } from "vitest";
import { postgresMissing } from "../support/postgres.js";
import { createWebhookSentinel, useTeam } from "../support/team.js";
import { until } from "../support/webhook-receiver.js";
import { fakeGhEnv } from "./github-helpers.js";

const missing = postgresMissing();
if (missing) console.warn(missing);
const SECRET = `whsec_${Buffer.alloc(32, 6).toString("base64")}`;

describe.skipIf(!!missing)("team mode: the local-gh poller runs on one daemon of the team at a time", () => {
  // Each daemon its own fake gh recorder (FAKE_GH_LOG), so the test tells who polled (registered
  // before useTeam's hooks, so it runs first).
  let gh: Array<Awaited<ReturnType<typeof fakeGhEnv>>> = [];
  beforeAll(async () => {
    gh = [await fakeGhEnv("pr-42"), await fakeGhEnv("pr-42")];
  });
  const fx = useTeam(SECRET, { env: (i) => gh[i]!.env });

  /** The GitHub API calls daemon i's gh made so far. */
  const polls = async (i: number) => (await gh[i]!.calls()).filter((c) => c.cmd === "api").length;

  it("one daemon polls while the other does not; killed, the other takes over; restarted, it stays idle", async () => {
    const { team } = fx;
    for (const i of [0, 1]) {
      const res = await team.daemon(i).fetch("/sentinel-providers/local-gh/setup", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ settings: { intervalSeconds: 10 } }),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    await createWebhookSentinel(team.daemon(0), {
      subject: "github:acme/api",
      provider: "local-gh",
      url: fx.rx.url,
      secret: SECRET,
    });

    // Whoever polls first holds the lease; after two of its polls, the other has made none.
    const holder = await until(
      async () => {
        const [a, b] = [await polls(0), await polls(1)];
        return a > 0 || b > 0 ? (a > 0 ? 0 : 1) : undefined;
      },
      "a first poll",
      60_000,
    );
    const other = 1 - holder;
    await until(async () => (await polls(holder)) >= 2, "the holder's second poll", 60_000);
    expect(await polls(other), "polls by the daemon not holding the lease").toBe(0);

    // kill -9 the holder: the other takes the lease over and polls.
    await team.kill9(holder);
    const frozen = await polls(holder);
    await until(async () => (await polls(other)) > 0, "the survivor's first poll", 120_000);

    // The killed daemon restarts while the survivor holds the lease: it stays idle.
    await team.start(holder);
    const base = await polls(other);
    await until(async () => (await polls(other)) >= base + 2, "two more polls by the survivor", 120_000);
    expect(await polls(holder), "polls by the restarted daemon").toBe(frozen);
  }, 300_000);
});
