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
  -- A short pending list: searches scan it in full, and a long one makes the planner avoid the index.
  CREATE INDEX svc_mail_search ON svc_mail USING gin (search gin_trgm_ops) WITH (gin_pending_list_limit = 256);

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

  -- Statement-level, over the rows the statement changed: marking 100,000
  -- read is one update of the counts, not 100,000.
  CREATE FUNCTION svc_count_changes(changes_inbox text, total_change bigint, unread_change bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO svc_counts AS c (inbox, shard, total, unread)
      VALUES (changes_inbox, pg_backend_pid() % 16, total_change, unread_change)
      ON CONFLICT (inbox, shard) DO UPDATE SET total = c.total + EXCLUDED.total, unread = c.unread + EXCLUDED.unread
  $$;

  CREATE FUNCTION svc_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM svc_count_changes(inbox, count(*), count(*) FILTER (WHERE NOT read)) FROM added GROUP BY inbox;
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION svc_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM svc_count_changes(inbox, -count(*), -count(*) FILTER (WHERE NOT read)) FROM removed GROUP BY inbox;
    RETURN NULL;
  END
  $$;
  CREATE FUNCTION svc_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM svc_count_changes(after.inbox, 0, count(*) FILTER (WHERE NOT after.read) - count(*) FILTER (WHERE NOT before.read))
      FROM after JOIN before USING (inbox, id)
      GROUP BY after.inbox
      HAVING count(*) FILTER (WHERE after.read <> before.read) > 0;
    RETURN NULL;
  END
  $$;

  CREATE TRIGGER svc_mail_added AFTER INSERT ON svc_mail REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION svc_count_added();
  CREATE TRIGGER svc_mail_removed AFTER DELETE ON svc_mail REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION svc_count_removed();
  CREATE TRIGGER svc_mail_updated AFTER UPDATE ON svc_mail REFERENCING OLD TABLE AS before NEW TABLE AS after
    FOR EACH STATEMENT EXECUTE FUNCTION svc_count_updated();
  `,
  // 2: the last successful relay of a message (3.2), null until it is relayed.
  `
  ALTER TABLE svc_mail ADD COLUMN relayed_at timestamptz, ADD COLUMN relayed_to json;
  `,
  // 3: parts the HTML body shows inline (`cid:`) are counted apart from attachments. Rows kept before are
  // read the way svc reads them (a part is inline when the HTML body names its content id after `cid:`).
  `
  ALTER TABLE svc_mail ADD COLUMN inline_count integer NOT NULL DEFAULT 0;
  UPDATE svc_mail SET inline_count = (
      SELECT count(*) FROM json_array_elements(body -> 'attachments') AS part
      WHERE part ->> 'contentId' <> ''
        AND strpos(lower(body ->> 'html'), 'cid:' || lower(btrim(part ->> 'contentId', '<>'))) > 0
    )
    WHERE attachment_count > 0;
  UPDATE svc_mail SET attachment_count = attachment_count - inline_count,
      summary = regexp_replace(summary::text, '"attachmentCount":\\s*\\d+', '"attachmentCount": ' || (attachment_count - inline_count))::json
    WHERE inline_count > 0;
  `,
  // 4: the fields plugins record after intake (EmailUpdate), one map the driver keeps without knowing their
  // names; the relay's columns of step 2 move into it.
  `
  ALTER TABLE svc_mail ADD COLUMN fields jsonb NOT NULL DEFAULT '{}';
  UPDATE svc_mail SET fields = jsonb_build_object(
      'relayedAt', to_char(relayed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'relayedTo', coalesce(relayed_to::jsonb, '[]'))
    WHERE relayed_at IS NOT NULL;
  ALTER TABLE svc_mail DROP COLUMN relayed_at, DROP COLUMN relayed_to;
  `,
  // 5: raw sources are read a slice at a time as clients download them (rawStream); a compressed value is
  // decompressed from its start for every slice, so new ones are kept uncompressed, each slice read alone.
  `
  ALTER TABLE svc_mail ALTER COLUMN raw SET STORAGE EXTERNAL;
  `,
  // 6: the list of inboxes reads the counts table alone. Each shard row keeps the latest time of receipt
  // among the arrivals it counted (newest) and among the removals (removed): while no removal reached an
  // inbox's newest time, that time is its newest message's; after one did, the list looks it up in the index.
  // It runs again unharmed where the columns and function exist already (a database whose recorded version alone was rewound).
  `
  ALTER TABLE svc_counts ADD COLUMN IF NOT EXISTS newest bigint, ADD COLUMN IF NOT EXISTS removed bigint;
  UPDATE svc_counts c SET newest = (SELECT max(received) FROM svc_mail m WHERE m.inbox = c.inbox);

  DROP FUNCTION IF EXISTS svc_count_changes(text, bigint, bigint);
  CREATE OR REPLACE FUNCTION svc_count_changes(changes_inbox text, total_change bigint, unread_change bigint, arrived bigint, left_at bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO svc_counts AS c (inbox, shard, total, unread, newest, removed)
      VALUES (changes_inbox, pg_backend_pid() % 16, total_change, unread_change, arrived, left_at)
      ON CONFLICT (inbox, shard) DO UPDATE SET total = c.total + EXCLUDED.total, unread = c.unread + EXCLUDED.unread,
        newest = greatest(c.newest, EXCLUDED.newest), removed = greatest(c.removed, EXCLUDED.removed)
  $$;

  CREATE OR REPLACE FUNCTION svc_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM svc_count_changes(inbox, count(*), count(*) FILTER (WHERE NOT read), max(received), NULL) FROM added GROUP BY inbox;
    RETURN NULL;
  END
  $$;
  CREATE OR REPLACE FUNCTION svc_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM svc_count_changes(inbox, -count(*), -count(*) FILTER (WHERE NOT read), NULL, max(received)) FROM removed GROUP BY inbox;
    RETURN NULL;
  END
  $$;
  CREATE OR REPLACE FUNCTION svc_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM svc_count_changes(after.inbox, 0, count(*) FILTER (WHERE NOT after.read) - count(*) FILTER (WHERE NOT before.read), NULL, NULL)
      FROM after JOIN before USING (inbox, id)
      GROUP BY after.inbox
      HAVING count(*) FILTER (WHERE after.read <> before.read) > 0;
    RETURN NULL;
  END
  $$;
  `,
  // 7: an inbox's counts in one row where they can be: a change takes shard 0 when no other transaction holds
  // it, never waiting for one, and then folds in the other shards no one holds; only a change that finds shard 0
  // held takes its own. The list of inboxes and a page's counts then read one row per inbox, not up to 16. The
  // shards kept so far fold into shard 0 here, writers held off meanwhile; it runs again unharmed. A statement's
  // inboxes are counted in the order of their names: a change waits only for a row of the inbox it is at, never
  // while holding one of that inbox, so no two statements wait for each other.
  `
  LOCK TABLE svc_counts IN SHARE ROW EXCLUSIVE MODE;
  INSERT INTO svc_counts AS c (inbox, shard, total, unread, newest, removed)
    SELECT inbox, 0, sum(total), sum(unread), max(newest), max(removed) FROM svc_counts WHERE shard <> 0 GROUP BY inbox
    ON CONFLICT (inbox, shard) DO UPDATE SET total = c.total + EXCLUDED.total, unread = c.unread + EXCLUDED.unread,
      newest = greatest(c.newest, EXCLUDED.newest), removed = greatest(c.removed, EXCLUDED.removed);
  DELETE FROM svc_counts WHERE shard <> 0;

  CREATE OR REPLACE FUNCTION svc_count_changes(changes_inbox text, total_change bigint, unread_change bigint, arrived bigint, left_at bigint) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM FROM svc_counts WHERE inbox = changes_inbox AND shard = 0 FOR UPDATE SKIP LOCKED;
    IF FOUND THEN
      WITH folded AS (
        DELETE FROM svc_counts WHERE inbox = changes_inbox AND shard IN (
          SELECT shard FROM svc_counts WHERE inbox = changes_inbox AND shard <> 0 FOR UPDATE SKIP LOCKED)
        RETURNING total, unread, newest, removed
      )
      UPDATE svc_counts c SET total = c.total + total_change + f.total, unread = c.unread + unread_change + f.unread,
          newest = greatest(c.newest, arrived, f.newest), removed = greatest(c.removed, left_at, f.removed)
        FROM (SELECT coalesce(sum(total), 0) AS total, coalesce(sum(unread), 0) AS unread, max(newest) AS newest, max(removed) AS removed FROM folded) f
        WHERE c.inbox = changes_inbox AND c.shard = 0;
      RETURN;
    END IF;
    INSERT INTO svc_counts AS c (inbox, shard, total, unread, newest, removed)
      VALUES (changes_inbox,
        CASE WHEN EXISTS (SELECT FROM svc_counts WHERE inbox = changes_inbox AND shard = 0) THEN 1 + pg_backend_pid() % 15 ELSE 0 END,
        total_change, unread_change, arrived, left_at)
      ON CONFLICT (inbox, shard) DO UPDATE SET total = c.total + EXCLUDED.total, unread = c.unread + EXCLUDED.unread,
        newest = greatest(c.newest, EXCLUDED.newest), removed = greatest(c.removed, EXCLUDED.removed);
  END
  $$;

  CREATE OR REPLACE FUNCTION svc_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    changed record;
  BEGIN
    FOR changed IN SELECT inbox, count(*) AS total, count(*) FILTER (WHERE NOT read) AS unread, max(received) AS newest
        FROM added GROUP BY inbox ORDER BY inbox LOOP
      PERFORM svc_count_changes(changed.inbox, changed.total, changed.unread, changed.newest, NULL);
    END LOOP;
    RETURN NULL;
  END
  $$;
  CREATE OR REPLACE FUNCTION svc_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    changed record;
  BEGIN
    FOR changed IN SELECT inbox, count(*) AS total, count(*) FILTER (WHERE NOT read) AS unread, max(received) AS newest
        FROM removed GROUP BY inbox ORDER BY inbox LOOP
      PERFORM svc_count_changes(changed.inbox, -changed.total, -changed.unread, NULL, changed.newest);
    END LOOP;
    RETURN NULL;
  END
  $$;
  CREATE OR REPLACE FUNCTION svc_count_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    changed record;
  BEGIN
    FOR changed IN SELECT after.inbox, count(*) FILTER (WHERE NOT after.read) - count(*) FILTER (WHERE NOT before.read) AS unread
        FROM after JOIN before USING (inbox, id)
        GROUP BY after.inbox
        HAVING count(*) FILTER (WHERE after.read <> before.read) > 0
        ORDER BY after.inbox LOOP
      PERFORM svc_count_changes(changed.inbox, 0, changed.unread, NULL, NULL);
    END LOOP;
    RETURN NULL;
  END
  $$;
  `,
  // 8: each summary's text as pages send it (summaryText), kept in the two parts around its read state, so that a
  // page is read as texts svc passes on rather than as summaries it decodes and serializes again (listSerialized).
  // Rows kept before keep none, and svc serializes theirs as it reads them: filling them in here rewrote every row
  // and its search index entries, over two minutes at 100,000 messages, all of it before the instance is healthy.
  // It runs again unharmed.
  `
  ALTER TABLE svc_mail ADD COLUMN IF NOT EXISTS listed_head text, ADD COLUMN IF NOT EXISTS listed_tail text;
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
