import type { Sql } from 'postgres'

/**
 * The schema, as numbered steps: each runs once per database, in order, in
 * the transaction that records it. A new version appends a step; a step is
 * never edited once released, since databases out there have run it.
 *
 * Every table is keyed by inbox, so that one database can hold several.
 */
const MIGRATIONS: string[] = [
  // 1: the mail, its counts and the trigram index of its search text.
  `
  CREATE EXTENSION IF NOT EXISTS pg_trgm;

  CREATE TABLE svc_mail (
    inbox text NOT NULL,
    id text NOT NULL,
    -- Arrival order: ties of time of receipt and the unordered listing follow it.
    seq bigint GENERATED ALWAYS AS IDENTITY,
    -- Time of receipt, epoch milliseconds.
    received bigint NOT NULL,
    read boolean NOT NULL,
    size bigint NOT NULL,
    attachment_count integer NOT NULL,
    -- json, not jsonb: fields and headers keep the order they were parsed in.
    summary json NOT NULL,
    body json NOT NULL,
    raw bytea NOT NULL,
    -- Lower-case texts the search syntax matches: plain words, then one per operator.
    search text NOT NULL,
    from_text text NOT NULL,
    to_text text NOT NULL,
    cc_text text NOT NULL,
    subject_text text NOT NULL,
    filename_text text NOT NULL,
    PRIMARY KEY (inbox, id)
  );
  CREATE INDEX svc_mail_received ON svc_mail (inbox, received, seq);
  CREATE INDEX svc_mail_arrival ON svc_mail (inbox, seq);
  CREATE INDEX svc_mail_search ON svc_mail USING gin (search gin_trgm_ops);

  -- Counts kept as rows change, never counted by a scan. Spread over shards
  -- (one per server process, by pid) so that concurrent writers never wait
  -- on one row; an inbox's counts are the sum of its few shards.
  CREATE TABLE svc_counts (
    inbox text NOT NULL,
    shard integer NOT NULL,
    total bigint NOT NULL,
    unread bigint NOT NULL,
    PRIMARY KEY (inbox, shard)
  );

  CREATE FUNCTION svc_count_mail() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    row_inbox text;
    total_change integer := 0;
    unread_change integer := 0;
  BEGIN
    IF TG_OP = 'INSERT' THEN
      row_inbox := NEW.inbox;
      total_change := 1;
      unread_change := CASE WHEN NEW.read THEN 0 ELSE 1 END;
    ELSIF TG_OP = 'DELETE' THEN
      row_inbox := OLD.inbox;
      total_change := -1;
      unread_change := CASE WHEN OLD.read THEN 0 ELSE -1 END;
    ELSE
      row_inbox := NEW.inbox;
      unread_change := (CASE WHEN NEW.read THEN 0 ELSE 1 END) - (CASE WHEN OLD.read THEN 0 ELSE 1 END);
      IF unread_change = 0 THEN RETURN NULL; END IF;
    END IF;
    INSERT INTO svc_counts AS c (inbox, shard, total, unread)
      VALUES (row_inbox, pg_backend_pid() % 16, total_change, unread_change)
      ON CONFLICT (inbox, shard) DO UPDATE SET total = c.total + EXCLUDED.total, unread = c.unread + EXCLUDED.unread;
    RETURN NULL;
  END
  $$;

  CREATE TRIGGER svc_mail_counts AFTER INSERT OR DELETE OR UPDATE OF read ON svc_mail
    FOR EACH ROW EXECUTE FUNCTION svc_count_mail();
  `,
]

/** The schema version this svc writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length

/** Any constant: the advisory lock every starting instance takes before it looks at the schema. */
const MIGRATION_LOCK = 0x5356_4301

/**
 * Creates or upgrades the schema. Several instances may start at once: each
 * takes the same transaction-scoped advisory lock first, so one migrates and
 * the others then find the work done. A database newer than this svc is
 * refused rather than misread.
 */
export async function migrate(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`CREATE TABLE IF NOT EXISTS svc_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`
    const [{ version }] = await tx<[{ version: number }]>`SELECT coalesce(max(version), 0)::int AS version FROM svc_schema`
    if (version > SCHEMA_VERSION) {
      throw new Error(`the database holds svc schema version ${version}, newer than this svc's ${SCHEMA_VERSION}: upgrade svc`)
    }
    for (let next = version + 1; next <= SCHEMA_VERSION; next++) {
      await tx.unsafe(MIGRATIONS[next - 1]!)
      await tx`INSERT INTO svc_schema (version) VALUES (${next})`
    }
  })
}
