/**
 * Which store this daemon (or CLI verb) runs on, chosen once at start (core/store/select.ts):
 * `file` (the default: `$SVC_HOME`'s files) or `postgres` (team mode: `store.url`). In team mode
 * the open database rides along; its module loads only then.
 */
import { token } from "../tokens.js";

export type StoreSelection =
  | { kind: "file" }
  | {
      kind: "postgres";
      /** host:port/database, for logs and errors (never the password). */
      where: string;
      db: import("./postgres/database.js").OpenTeamDatabase;
      /** The team's job queue (host service `teamJobs`); stopped before the pool closes. */
      jobs?: import("./postgres/jobs.js").OpenTeamJobs;
    };

export const STORE = token<StoreSelection>("store");
