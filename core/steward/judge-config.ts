/**
 * Where the steward's judge is and who it is: the key (`extJudge.apiKey`, else `EXT_JUDGE_API_KEY`,
 * folded in by the config resolver), the URL (`extJudge.baseUrl` + `/chat/completions`), the model
 * (the `judge.session` role when config sets it, else `extJudge.model`, else `ext-latest`), and the
 * budget window and timeout. Pure: read from the effective config at each use.
 */
import type { ConfigSnapshot, EffectiveConfig } from "../config/config-service.js";
import { resolveRoleTable } from "../config/models.js";

export const JUDGE_ROLE = "judge.session";
export const DEFAULT_JUDGE_MODEL = "ext-latest";

export interface JudgeSettings {
  /** The bearer key; absent: the steward judges nothing. */
  key?: { value: string; from: string };
  /** `extJudge.baseUrl` without trailing slashes. */
  baseUrl: string;
  /** The URL a request is posted to: `<baseUrl>/chat/completions`. */
  url: string;
  model: string;
  /** The llm-endpoint route and profile the `judge.session` role names, when config sets them. */
  route?: string;
  profile?: string;
  /** 0: no limit. */
  windowMs: number;
  timeoutMs: number;
}

/** The chat-completions URL of a base URL: the OpenAI convention, base URLs end in `/v1`. */
export function judgeUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/chat/completions`;
}

export function judgeSettings(snap: Pick<ConfigSnapshot, "effective" | "sources">): JudgeSettings {
  const cfg: EffectiveConfig = snap.effective;
  const j = cfg.extJudge;
  const role = resolveRoleTable(cfg).roles[JUDGE_ROLE];
  const configured = role && role.source !== "default" ? role : undefined;
  const src = snap.sources["extJudge.apiKey"];
  const from = src?.kind === "env" ? `the daemon's ${src.name}` : "extJudge.apiKey";
  const baseUrl = j.baseUrl.replace(/\/+$/, "");
  return {
    ...(j.apiKey ? { key: { value: j.apiKey, from } } : {}),
    baseUrl,
    url: judgeUrl(baseUrl),
    model: configured?.model ?? j.model ?? DEFAULT_JUDGE_MODEL,
    ...(configured?.route ? { route: configured.route } : {}),
    ...(configured?.profile ? { profile: configured.profile } : {}),
    windowMs: Math.round((j.windowSec ?? 600) * 1000),
    timeoutMs: Math.round((j.timeoutSec ?? 30) * 1000),
  };
}
