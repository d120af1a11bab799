-- What an agent session changed, for capture: where git stood when it started (HEAD and the
-- files already dirty), when it was last seen, whether the end-of-turn hook already asked it
-- to record what it did, and the checkpoint drafted for it when it ended.
CREATE TABLE capture_sessions (
    session_key   TEXT PRIMARY KEY,
    project_id    TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    developer     TEXT NOT NULL DEFAULT '',
    started_at    TEXT NOT NULL,
    seen_at       TEXT NOT NULL,
    root          TEXT NOT NULL DEFAULT '',  -- the git work tree ('' outside git)
    start_head    TEXT NOT NULL DEFAULT '',
    start_dirty   TEXT NOT NULL DEFAULT '[]',  -- JSON list of paths dirty at the start
    asked_at      TEXT,
    ended_at      TEXT,
    checkpoint_id TEXT
);
CREATE INDEX capture_sessions_open ON capture_sessions(project_id, developer, ended_at);

-- What agents wrote, held for a person's approval ([capture] review): a draft here is never
-- recalled, briefed, exported or shared; approving it writes it as any record is written.
CREATE TABLE review_queue (
    id          TEXT PRIMARY KEY,
    project_id  TEXT REFERENCES projects(id) ON DELETE CASCADE,  -- NULL: a global record
    developer   TEXT NOT NULL DEFAULT '',
    draft       TEXT NOT NULL,            -- JSON: the record as the agent asked for it
    supersedes  TEXT NOT NULL DEFAULT '[]',
    queued_at   TEXT NOT NULL,
    state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'rejected')),
    reason      TEXT,
    decided_at  TEXT
);
CREATE INDEX review_queue_waiting ON review_queue(project_id, developer, state);
