-- What an agent session changed, for capture: where git stood when it started (HEAD and the
-- files already dirty), when it was last seen, whether the end-of-turn hook already asked it
-- to record what it did, and the checkpoint drafted for it when it ended.
CREATE TABLE capture_sessions (
    session_key   TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    developer     TEXT NOT NULL DEFAULT '',
    started_at    TEXT NOT NULL,
    seen_at       TEXT NOT NULL,
    start_head    TEXT NOT NULL DEFAULT '',
    start_dirty   TEXT NOT NULL DEFAULT '[]',  -- JSON list of paths dirty at the start
    asked_at      TEXT,
    ended_at      TEXT,
    checkpoint_id TEXT
);
CREATE INDEX capture_sessions_open ON capture_sessions(project_id, developer, ended_at);
