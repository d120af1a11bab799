-- Code a record names (its scope globs, paths and symbols in its text) that changed in git after
-- the record was last verified: derived from the repository, recomputed there, never synced.
-- One row per record: the latest such change. A record verified since is no longer stale
-- (committed_at <= verified_at), so verifying clears the mark without touching this table.
CREATE TABLE code_changes (
    record_id    TEXT PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
    commit_sha   TEXT NOT NULL,
    committed_at TEXT NOT NULL,
    subject      TEXT NOT NULL,
    path         TEXT NOT NULL,
    change       TEXT NOT NULL
);

-- How far each project's history has been read: the next check reads only newer commits.
CREATE TABLE code_checks (
    project_id  TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    head        TEXT NOT NULL,
    renames     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(renames)),  -- old path -> new path
    checked_at  TEXT NOT NULL
);
