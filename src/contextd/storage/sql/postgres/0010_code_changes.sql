-- Code a record names that changed in git after it was last verified (as SQLite's 0010): one
-- row per record, its latest change; and how far each project's history has been read.
CREATE TABLE code_changes (
    record_id    TEXT COLLATE "C" PRIMARY KEY REFERENCES records(id) ON DELETE CASCADE,
    commit_sha   TEXT NOT NULL,
    committed_at TEXT COLLATE "C" NOT NULL,
    subject      TEXT NOT NULL,
    path         TEXT NOT NULL,
    change       TEXT NOT NULL
);

CREATE TABLE code_checks (
    project_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    head        TEXT NOT NULL,
    renames     TEXT NOT NULL DEFAULT '{}',  -- old path -> new path, as JSON
    checked_at  TEXT NOT NULL
);
