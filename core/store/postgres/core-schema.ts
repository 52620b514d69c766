/**
 * The host's tables in the team store (owner `core`): migration i is version i + 1. Never edit
 * a shipped migration; append one.
 */
export const CORE_MIGRATIONS: readonly string[] = [
  `CREATE TABLE svc_sentinels (
     id text PRIMARY KEY,
     record jsonb NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now()
   );
   CREATE TABLE svc_leases (
     name text PRIMARY KEY,
     holder text NOT NULL,
     expires_at timestamptz NOT NULL
   );
   CREATE TABLE svc_daemons (
     id text PRIMARY KEY,
     host text NOT NULL,
     pid integer NOT NULL,
     svc_version text NOT NULL,
     started_at timestamptz NOT NULL DEFAULT now(),
     heartbeat_at timestamptz NOT NULL DEFAULT now()
   );`,
  // The team key's check value (key-check.ts): one row, sealed by the first daemon's key.
  `CREATE TABLE svc_team_key (
     id integer PRIMARY KEY CHECK (id = 1),
     sealed bytea NOT NULL
   );`,
];

/** NOTIFY channel: payload `<sentinel id>` after any change to that sentinel's row. */
export const SENTINELS_CHANNEL = "svc_sentinels";
