-- What an agent session changed, for capture (as SQLite's 0014).
CREATE TABLE capture_sessions (
    session_key   TEXT COLLATE "C" PRIMARY KEY,
    project_id    TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    developer     TEXT COLLATE "C" NOT NULL DEFAULT '',
    started_at    TEXT COLLATE "C" NOT NULL,
    seen_at       TEXT COLLATE "C" NOT NULL,
    start_head    TEXT COLLATE "C" NOT NULL DEFAULT '',
    start_dirty   TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    asked_at      TEXT COLLATE "C",
    ended_at      TEXT COLLATE "C",
    checkpoint_id TEXT COLLATE "C"
);
CREATE INDEX capture_sessions_open ON capture_sessions(project_id, developer, ended_at);
