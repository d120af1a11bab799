-- What the agent hooks put in front of each agent session (keyed by the agent's own session
-- id), so a constraint is shown once per session and a compaction can be compared.
CREATE TABLE hook_shown (
    session_key TEXT NOT NULL,
    record_id   TEXT NOT NULL,
    via         TEXT NOT NULL CHECK (via IN ('briefing', 'prompt', 'constraint')),
    shown_at    TEXT NOT NULL,
    PRIMARY KEY (session_key, record_id, via)
);
CREATE INDEX hook_shown_age ON hook_shown(shown_at);

CREATE TABLE compaction_snapshots (
    id              TEXT PRIMARY KEY,
    session_key     TEXT NOT NULL,
    project_id      TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    taken_at        TEXT NOT NULL,
    trigger         TEXT NOT NULL,
    record_ids      TEXT NOT NULL,  -- JSON list: what the session had been given
    quality_issues  INTEGER NOT NULL,
    report          TEXT,           -- JSON, once compared after the compaction
    reported_at     TEXT
);
CREATE INDEX compaction_snapshots_project ON compaction_snapshots(project_id, taken_at);
