-- Exchanging records between machines: this store's identity, what each record's current
-- version descends from, divergences found while merging, and the SSH remotes.

-- One row: the id other stores know this one by (named in every bundle it exports).
CREATE TABLE sync_store (
    singleton   INTEGER PRIMARY KEY CHECK (singleton = 1),
    store_id    TEXT NOT NULL
);
INSERT INTO sync_store(singleton, store_id) VALUES (1, lower(hex(randomblob(16))));

-- Versions (updated_at) of a record that were exchanged with another store: the record's
-- current version descends from each of them, so a merge can tell "only one side changed
-- since they last exchanged" (fast-forward) from "both changed" (a divergence).
CREATE TABLE sync_versions (
    record_id   TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (record_id, updated_at)
) WITHOUT ROWID;

-- Both sides changed a record since they last exchanged: the local copy was kept and the
-- other side's version is held here until the two agree again.
CREATE TABLE sync_conflicts (
    record_id         TEXT PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
    peer              TEXT NOT NULL,
    local_updated_at  TEXT NOT NULL,
    remote_updated_at TEXT NOT NULL,
    remote_record     TEXT NOT NULL CHECK (json_valid(remote_record)),
    detected_at       TEXT NOT NULL
);

-- Other machines reached over the system ssh, and when each was last pulled from / pushed to.
CREATE TABLE sync_remotes (
    name          TEXT PRIMARY KEY,
    target        TEXT NOT NULL,
    login_shell   INTEGER NOT NULL DEFAULT 0,
    command       TEXT,
    remote_home   TEXT,
    ssh_options   TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(ssh_options)),
    store_id      TEXT,
    last_pull_at  TEXT,
    last_push_at  TEXT,
    created_at    TEXT NOT NULL
);
