-- Capture (as SQLite's 0014): what an agent session changed, and what agents wrote held for review.
CREATE TABLE capture_sessions (
    session_key   TEXT COLLATE "C" PRIMARY KEY,
    project_id    TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    developer     TEXT COLLATE "C" NOT NULL DEFAULT '',
    started_at    TEXT COLLATE "C" NOT NULL,
    seen_at       TEXT COLLATE "C" NOT NULL,
    root          TEXT COLLATE "C" NOT NULL DEFAULT '',
    start_head    TEXT COLLATE "C" NOT NULL DEFAULT '',
    start_dirty   TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    asked_at      TEXT COLLATE "C",
    ended_at      TEXT COLLATE "C",
    checkpoint_id TEXT COLLATE "C"
);
CREATE INDEX capture_sessions_open ON capture_sessions(project_id, developer, ended_at);

CREATE TABLE review_queue (
    id          TEXT COLLATE "C" PRIMARY KEY,
    project_id  TEXT COLLATE "C" REFERENCES projects(id) ON DELETE CASCADE,
    developer   TEXT COLLATE "C" NOT NULL DEFAULT '',
    draft       TEXT COLLATE "C" NOT NULL,
    supersedes  TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    queued_at   TEXT COLLATE "C" NOT NULL,
    state       TEXT COLLATE "C" NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'rejected')),
    reason      TEXT COLLATE "C",
    decided_at  TEXT COLLATE "C"
);
CREATE INDEX review_queue_waiting ON review_queue(project_id, developer, state);
