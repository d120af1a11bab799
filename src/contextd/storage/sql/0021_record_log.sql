-- Each record's log: every change, who made it and through what (cli, mcp and the client's
-- name, http and the token's, web, hook, sync, import), with the record as it was before,
-- so a change can be undone (unsupersede, restore a deleted record) and read back (history).
-- It stays on this machine, as sessions do; a deleted record's log goes with its tombstone.
CREATE TABLE record_log (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id  TEXT NOT NULL,
    at         TEXT NOT NULL,
    event      TEXT NOT NULL,  -- created, updated, superseded, archived, deleted, restored, ...
    actor      TEXT NOT NULL DEFAULT '',  -- the developer ('' in a home: its one person)
    via        TEXT NOT NULL DEFAULT '',
    owner      TEXT NOT NULL DEFAULT '',  -- the record's owner then: who may read the entry
    handle     TEXT,                      -- its handle, which a restore gives back
    private    INTEGER NOT NULL DEFAULT 0,  -- kept out of repository files, as the record was
    prior      TEXT                        -- JSON: the record before the change, if it had one
);
CREATE INDEX record_log_record ON record_log(record_id, seq);

-- A held change to a stored record (update, append, link, supersede, archive, delete), beside
-- held new records: `target` is the record, `payload` what the agent asked for (JSON).
ALTER TABLE review_queue ADD COLUMN request TEXT NOT NULL DEFAULT 'create';
ALTER TABLE review_queue ADD COLUMN target TEXT;
ALTER TABLE review_queue ADD COLUMN payload TEXT NOT NULL DEFAULT '{}';
CREATE INDEX review_queue_target ON review_queue(target);
