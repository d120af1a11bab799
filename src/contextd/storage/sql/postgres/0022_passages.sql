-- The vectors of a long record's later windows (as SQLite's 0022): float32 little-endian end
-- to end, NULL when the record fits in its first window. Scored for the candidates the HNSW
-- index and full text find, not indexed themselves.
ALTER TABLE embeddings ADD COLUMN passages BYTEA;
