/**
 * Team mode's start (loaded only then, by core/store/module.ts): loads the team key, opens the
 * pool (one connection checked: a wrong URL, password, server or database fails here), applies
 * the core migrations (a schema newer than this svc is refused before anything is written), checks
 * that its key is the team's (key-check.ts), opens the job queue, then registers STORE and offers
 * the host services `teamDatabase` and `teamJobs`. A failure closes what it opened.
 */
import { hostname } from "node:os";
import type { DependencyContainer } from "tsyringe";
import type { ValueSource } from "../../config/config-service.js";
import { formatSource } from "../../config/resolve.js";
import { registerValue } from "../../runtime/inject.js";
import type { Logger } from "../../runtime/logger.js";
import { HELD_SECRETS } from "../../redaction/held-secrets.js";
import { RANDOM, SERVICES, resolve } from "../../tokens.js";
import { STORE } from "../tokens.js";
import { CORE_MIGRATIONS } from "./core-schema.js";
import { openTeamDatabase } from "./database.js";
import { describeStore } from "./errors.js";
import { provideTeamJobs, type OpenTeamJobs } from "./jobs.js";
import { checkTeamKey } from "./key-check.js";
import { loadTeamKey } from "./secret-key.js";

export interface TeamStoreOptions {
  url: string;
  env: NodeJS.ProcessEnv;
  home: string;
  keyFile?: string;
  keyFileSource?: ValueSource;
  logger: Logger;
}

export async function openTeamStore(c: DependencyContainer, o: TeamStoreOptions): Promise<void> {
  const key = await loadTeamKey({
    env: o.env,
    home: o.home,
    keyFile: o.keyFile,
    keyFileFrom: o.keyFileSource?.kind === "env" ? formatSource(o.keyFileSource) : "config.json store.keyFile",
  });
  const where = describeStore(o.url);
  const daemonId = `${hostname()}-${process.pid}-${resolve(c, RANDOM).ulid()}`;
  // The team key and the database password are read once, here, then taken out of the daemon's
  // environment, so no child it starts (an agent session, a terminal, a provisioning command)
  // inherits them. pg reads PGPASSWORD at each new connection: the URL the pools use carries it.
  const envPassword = o.env.PGPASSWORD || undefined;
  const url = withPassword(o.url, envPassword);
  const folded = url !== o.url;
  const db = await openTeamDatabase({ url, key, daemonId, logger: o.logger });
  let jobs: OpenTeamJobs | undefined;
  try {
    await db.migrate("core", CORE_MIGRATIONS);
    await checkTeamKey(db);
    jobs = await provideTeamJobs(c, { db, url, logger: o.logger.child({ area: "jobs" }) });
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  delete o.env.SVC_STORE_KEY;
  if (folded) delete o.env.PGPASSWORD;
  // The URL's password (SVC_STORE_URL is not a secret-named variable) and PGPASSWORD are secrets the redaction floor removes.
  const urlPassword = URL.canParse(o.url) ? decodeURIComponent(new URL(o.url).password) : "";
  const held = [urlPassword, envPassword ?? ""].filter((v) => v !== "");
  if (held.length > 0) resolve(c, HELD_SECRETS).add({ name: "team store password", values: () => held });
  registerValue(c, STORE, { kind: "postgres", where, db, jobs });
  resolve(c, SERVICES).provide("teamDatabase", db);
  o.logger.info("team store opened", { store: where, daemon: daemonId });
}

/**
 * `url` with `password` in it; unchanged when there is none, when the URL has one (it wins, as in
 * pg) or names no user (pg then takes the user from elsewhere; PGPASSWORD stays in the environment).
 */
function withPassword(url: string, password: string | undefined): string {
  if (password === undefined || !URL.canParse(url)) return url;
  const u = new URL(url);
  if (u.password !== "" || u.username === "") return url;
  u.password = password;
  return u.toString();
}
