-- (query, record) pairs marked as the right answer; a small boost for similar later queries.
-- The query's vector is derived data like embeddings: tagged with its provider.
CREATE TABLE feedback (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  TEXT REFERENCES projects(id) ON DELETE CASCADE,
    record_id   TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    query       TEXT NOT NULL,
    provider    TEXT,
    vector      BLOB,
    created_at  TEXT NOT NULL
);
CREATE INDEX feedback_project ON feedback(project_id);
