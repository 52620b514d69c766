/**
 * The webhook target's tables in the team store (owner `webhook-target`, migrated through
 * `teamDatabase.migrate`): the same records as its files (docs/storage.md), one row per
 * accepted event, unique on (sentinel_id, event_id). Times are epoch ms, as in the files.
 */
export const WEBHOOK_OWNER = "webhook-target";

export const WEBHOOK_MIGRATIONS: readonly string[] = [
  `CREATE TABLE webhook_secrets (
     ref text PRIMARY KEY,
     sentinel_id text NOT NULL,
     sealed bytea NOT NULL,
     created_at bigint NOT NULL
   );
   CREATE INDEX webhook_secrets_sentinel ON webhook_secrets (sentinel_id);
   CREATE TABLE webhook_outbox (
     request_id text PRIMARY KEY,
     sentinel_id text NOT NULL,
     event_id text NOT NULL,
     body bytea NOT NULL,
     body_sha256 text NOT NULL,
     status text NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
     dead_reason text,
     attempts integer NOT NULL DEFAULT 0,
     last_error text,
     last_at bigint,
     created_at bigint NOT NULL,
     updated_at bigint NOT NULL,
     seen boolean NOT NULL DEFAULT false,
     replays integer NOT NULL DEFAULT 0,
     replayed_at bigint,
     UNIQUE (sentinel_id, event_id)
   );
   CREATE INDEX webhook_outbox_pending ON webhook_outbox (created_at) WHERE status = 'pending';
   CREATE INDEX webhook_outbox_sentinel ON webhook_outbox (sentinel_id, created_at);
   CREATE TABLE webhook_traces (
     sentinel_id text PRIMARY KEY,
     accepted bigint NOT NULL DEFAULT 0,
     removed bigint NOT NULL DEFAULT 0,
     event_ids jsonb NOT NULL DEFAULT '[]'::jsonb
   );`,
];
