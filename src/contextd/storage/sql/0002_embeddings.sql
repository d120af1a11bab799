-- Record vectors: derived data, never synced, rebuilt when the text or the model changes.
-- seq never repeats (AUTOINCREMENT), so (count, max seq) tells a reader whether anything changed.
CREATE TABLE embeddings (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id   TEXT NOT NULL UNIQUE REFERENCES records(id) ON DELETE CASCADE,
    provider    TEXT NOT NULL,
    dimensions  INTEGER NOT NULL,
    text_hash   TEXT NOT NULL,
    vector      BLOB NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX embeddings_provider ON embeddings(provider, dimensions);
