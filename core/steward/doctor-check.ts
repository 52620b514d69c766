/**
 * `svc doctor`'s word on the session steward: without a judge key nothing is judged. A warning when
 * a judge is configured otherwise (extJudge or the judge.session role set) but has no key; a note
 * when the steward is simply not set up and there are sessions it could have judged (an empty home
 * gets no finding). The key is looked for in config.json and in this environment's
 * EXT_JUDGE_API_KEY (the daemon's own environment may differ).
 */
import { readdir } from "node:fs/promises";
import type { ConfigSnapshot } from "../config/config-service.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { judgeSettings } from "./judge-config.js";

export async function checkSteward(snap: Pick<ConfigSnapshot, "effective" | "sources">): Promise<DoctorFinding[]> {
  if (judgeSettings(snap).key) return [];
  const set = Object.entries(snap.sources).some(
    ([k, src]) =>
      (k.startsWith("extJudge.") || k === "models.judge.session" || k.startsWith("models.judge.session.")) &&
      src.kind !== "default",
  );
  const fix =
    "set one: `svc config set extJudge.apiKey` (from stdin), or EXT_JUDGE_API_KEY in the daemon's environment (docs/steward.md)";
  if (set)
    return [
      {
        severity: "warn",
        file: "config.json",
        message:
          "the session steward has no judge key (extJudge.apiKey or EXT_JUDGE_API_KEY): it gives no verdicts although a judge is configured",
        fix,
      },
    ];
  const sessions = await readdir(snap.effective.sessions.eventsDir).catch(() => []);
  if (!sessions.some((n) => n.startsWith("ses_"))) return [];
  return [
    {
      severity: "info",
      file: "config.json",
      message:
        "the session steward is off: no judge key (extJudge.apiKey or EXT_JUDGE_API_KEY), so sessions get no verdicts",
      fix,
    },
  ];
}
