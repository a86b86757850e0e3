//! The tables, created at start, and the statements the store runs.

/// Creates the tables when missing. The advisory lock serializes nodes that start at the same
/// moment (concurrent `CREATE TABLE IF NOT EXISTS` can otherwise collide on the catalog).
pub(super) const MIGRATION: &str = "
BEGIN;
SELECT pg_advisory_xact_lock(7235553221);
CREATE TABLE IF NOT EXISTS stratagem_checkpoints (
    key text PRIMARY KEY,
    checkpoint bytea NOT NULL,
    checksum text NOT NULL,
    fencing_token bigint NOT NULL DEFAULT 0,
    seen_ids text[] NOT NULL DEFAULT '{}',
    saved_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS stratagem_leases (
    key text PRIMARY KEY,
    owner text NOT NULL,
    token bigint NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS stratagem_leases_owner ON stratagem_leases (owner);
CREATE TABLE IF NOT EXISTS stratagem_nodes (
    cluster text NOT NULL,
    node text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (cluster, node)
);
CREATE TABLE IF NOT EXISTS stratagem_journal (
    key text NOT NULL,
    position bigint NOT NULL,
    record bytea NOT NULL,
    fencing_token bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (key, position)
);
COMMIT;
";

/// An unfenced write: allowed only for keys never written under a lease, so a plain
/// `Store::save` can never overwrite a clustered agent's checkpoint.
pub(super) const SAVE: &str = "
INSERT INTO stratagem_checkpoints (key, checkpoint, checksum, fencing_token, saved_at)
VALUES ($1::text, $2::bytea, md5($2::bytea), 0, now())
ON CONFLICT (key) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, checksum = EXCLUDED.checksum,
    saved_at = EXCLUDED.saved_at
WHERE stratagem_checkpoints.fencing_token = 0";

/// A fenced write: only by the live holder of the lease with this token, and never over a
/// checkpoint written under a newer token. `FOR SHARE` makes a concurrent takeover wait for
/// this write (or this write see the takeover), never interleave with it.
pub(super) const SAVE_FENCED: &str = "
WITH lease AS (
    SELECT 1 FROM stratagem_leases
    WHERE key = $1::text AND owner = $3::text AND token = $4::bigint AND expires_at > now()
    FOR SHARE
)
INSERT INTO stratagem_checkpoints (key, checkpoint, checksum, fencing_token, seen_ids, saved_at)
SELECT $1::text, $2::bytea, md5($2::bytea), $4::bigint, $5::text[], now() FROM lease
ON CONFLICT (key) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, checksum = EXCLUDED.checksum,
    fencing_token = EXCLUDED.fencing_token, seen_ids = EXCLUDED.seen_ids,
    saved_at = EXCLUDED.saved_at
WHERE stratagem_checkpoints.fencing_token <= EXCLUDED.fencing_token";

/// Many fenced writes in one statement (one commit, one WAL flush), each under the same rules
/// as [`SAVE_FENCED`]: row `i` is `($1[i], $2[i])` written under the lease `($1[i], $3[i],
/// $4[i])` with the ids `$5[i]` (a JSON array). Returns the keys written; the others were
/// refused. The keys must be distinct (one statement cannot update a row twice).
pub(super) const SAVE_FENCED_MANY: &str = "
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::bigint[], $5::text[])
        AS i(key, checkpoint, owner, token, seen)
), fenced AS (
    SELECT input.* FROM input JOIN stratagem_leases lease
        ON lease.key = input.key AND lease.owner = input.owner AND lease.token = input.token
        AND lease.expires_at > now()
    ORDER BY input.key
    FOR SHARE OF lease
)
INSERT INTO stratagem_checkpoints (key, checkpoint, checksum, fencing_token, seen_ids, saved_at)
SELECT key, checkpoint, md5(checkpoint), token,
    ARRAY(SELECT jsonb_array_elements_text(seen::jsonb)), now()
FROM fenced
ORDER BY key
ON CONFLICT (key) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, checksum = EXCLUDED.checksum,
    fencing_token = EXCLUDED.fencing_token, seen_ids = EXCLUDED.seen_ids,
    saved_at = EXCLUDED.saved_at
WHERE stratagem_checkpoints.fencing_token <= EXCLUDED.fencing_token
RETURNING key";

/// The checkpoint, whether its checksum still matches, and the ids of the signals it includes.
pub(super) const LOAD: &str = "
SELECT checkpoint, checksum = md5(checkpoint), seen_ids FROM stratagem_checkpoints WHERE key = $1";

/// [`LOAD`] for many keys: the rows found, each with its key.
pub(super) const LOAD_MANY: &str = "
SELECT key, checkpoint, checksum = md5(checkpoint), seen_ids FROM stratagem_checkpoints
WHERE key = ANY($1::text[])";

pub(super) const DELETE: &str = "DELETE FROM stratagem_checkpoints WHERE key = $1";

pub(super) const KEYS: &str = "SELECT key FROM stratagem_checkpoints ORDER BY key";

/// Takes a lease that is free, expired or already ours; every claim raises the token, and
/// lease rows are never deleted, so tokens only grow.
pub(super) const CLAIM: &str = "
INSERT INTO stratagem_leases (key, owner, token, expires_at)
VALUES ($1, $2, 1, now() + make_interval(secs => $3::float8))
ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, token = stratagem_leases.token + 1,
    expires_at = EXCLUDED.expires_at
WHERE stratagem_leases.expires_at <= now() OR stratagem_leases.owner = EXCLUDED.owner
RETURNING token";

/// [`CLAIM`] for many keys at once (one commit): returns the keys claimed, with their tokens.
pub(super) const CLAIM_MANY: &str = "
INSERT INTO stratagem_leases (key, owner, token, expires_at)
SELECT key, $2, 1, now() + make_interval(secs => $3::float8)
FROM unnest($1::text[]) AS i(key) ORDER BY key
ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, token = stratagem_leases.token + 1,
    expires_at = EXCLUDED.expires_at
WHERE stratagem_leases.expires_at <= now() OR stratagem_leases.owner = EXCLUDED.owner
RETURNING key, token";

/// Extends the live leases of an owner among `keys`; what comes back is what it still holds.
/// An expired lease is not revived: it must be claimed again, under a new token. Only the
/// keys the caller names are renewed, so leases left by an earlier incarnation of a node
/// with the same name expire instead of being kept alive by a process that does not use them.
///
/// Rows are locked in key order, as the batched checkpoint write locks them (`FOR SHARE`): two
/// statements that lock many rows in different orders can deadlock, and PostgreSQL breaks a
/// deadlock only after `deadlock_timeout` (a second), failing one of them.
pub(super) const RENEW: &str = "
WITH held AS (
    SELECT key FROM stratagem_leases
    WHERE owner = $1 AND key = ANY($3::text[]) AND expires_at > now()
    ORDER BY key
    FOR UPDATE
)
UPDATE stratagem_leases SET expires_at = now() + make_interval(secs => $2::float8)
FROM held WHERE stratagem_leases.key = held.key
RETURNING stratagem_leases.key, stratagem_leases.token";

/// Gives a lease up (it expires now); the row stays so the next token is higher.
pub(super) const RELEASE: &str = "
UPDATE stratagem_leases SET expires_at = now() WHERE key = $1 AND owner = $2 AND token = $3";

/// Who holds a lease, while it is live.
pub(super) const HOLDER: &str = "
SELECT owner, token FROM stratagem_leases WHERE key = $1 AND expires_at > now()";

pub(super) const HEARTBEAT: &str = "
INSERT INTO stratagem_nodes (cluster, node, expires_at)
VALUES ($1, $2, now() + make_interval(secs => $3::float8))
ON CONFLICT (cluster, node) DO UPDATE SET expires_at = EXCLUDED.expires_at";

pub(super) const LIVE_NODES: &str =
    "SELECT node FROM stratagem_nodes WHERE cluster = $1 AND expires_at > now() ORDER BY node";

pub(super) const LEAVE: &str = "DELETE FROM stratagem_nodes WHERE cluster = $1 AND node = $2";

/// Leases not held by anyone now (expired or released), except `except_prefix` (shards):
/// the agents that ran somewhere before, which a node taking over their shard brings back.
pub(super) const IDLE: &str = "
SELECT key FROM stratagem_leases WHERE expires_at <= now() AND NOT starts_with(key, $1)";

/// Journal records of a key never leased (an agent outside the cluster), in one statement:
/// `($2[i], $3[i])` are (position, record). Returns whether the key is unleased and how many
/// records were written. A record at a position already there replaces it (a retried append).
pub(super) const JOURNAL_APPEND: &str = "
WITH allowed AS (
    SELECT NOT EXISTS (SELECT 1 FROM stratagem_leases WHERE key = $1::text) AS ok
), written AS (
    INSERT INTO stratagem_journal (key, position, record, fencing_token)
    SELECT $1::text, p, r, 0 FROM unnest($2::bigint[], $3::bytea[]) AS i(p, r)
    WHERE (SELECT ok FROM allowed)
    ON CONFLICT (key, position) DO UPDATE SET record = EXCLUDED.record
    WHERE stratagem_journal.fencing_token = 0
    RETURNING 1
)
SELECT (SELECT ok FROM allowed), (SELECT count(*) FROM written)";

/// [`JOURNAL_APPEND`] under the lease `($1, $4, $5)` (key, owner, token), as a fenced
/// checkpoint: only by its live holder, never over records of a higher token. Returns whether
/// the lease is live and how many records were written.
pub(super) const JOURNAL_APPEND_FENCED: &str = "
WITH lease AS (
    SELECT 1 FROM stratagem_leases
    WHERE key = $1::text AND owner = $4::text AND token = $5::bigint AND expires_at > now()
    FOR SHARE
), written AS (
    INSERT INTO stratagem_journal (key, position, record, fencing_token)
    SELECT $1::text, p, r, $5::bigint FROM unnest($2::bigint[], $3::bytea[]) AS i(p, r)
    WHERE EXISTS (SELECT 1 FROM lease)
    ON CONFLICT (key, position) DO UPDATE SET record = EXCLUDED.record,
        fencing_token = EXCLUDED.fencing_token
    WHERE stratagem_journal.fencing_token <= EXCLUDED.fencing_token
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM lease), (SELECT count(*) FROM written)";

pub(super) const JOURNAL_READ: &str = "
SELECT position, record FROM stratagem_journal WHERE key = $1 AND position >= $2
ORDER BY position";

pub(super) const JOURNAL_END: &str = "SELECT max(position) FROM stratagem_journal WHERE key = $1";

/// Removes the records of a never-leased key before position `$2`: (allowed, how many went).
pub(super) const JOURNAL_COMPACT: &str = "
WITH allowed AS (
    SELECT NOT EXISTS (SELECT 1 FROM stratagem_leases WHERE key = $1::text) AS ok
), gone AS (
    DELETE FROM stratagem_journal WHERE key = $1::text AND position < $2::bigint
        AND (SELECT ok FROM allowed)
    RETURNING 1
)
SELECT (SELECT ok FROM allowed), (SELECT count(*) FROM gone)";

/// [`JOURNAL_COMPACT`] under the lease `($1, $3, $4)`: (lease live, how many went).
pub(super) const JOURNAL_COMPACT_FENCED: &str = "
WITH lease AS (
    SELECT 1 FROM stratagem_leases
    WHERE key = $1::text AND owner = $3::text AND token = $4::bigint AND expires_at > now()
    FOR SHARE
), gone AS (
    DELETE FROM stratagem_journal WHERE key = $1::text AND position < $2::bigint
        AND EXISTS (SELECT 1 FROM lease)
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM lease), (SELECT count(*) FROM gone)";
