-- The bearer tokens `contextd serve` admits, one per developer (the token's name is the
-- developer it acts for). Only a hash of each secret is kept; `lookup`, the token's public
-- part, finds the row. The request window counts a token's requests in the current minute,
-- here so that every serve process on one store counts together.
CREATE TABLE http_tokens (
    name         TEXT PRIMARY KEY,
    lookup       TEXT NOT NULL UNIQUE,
    secret_hash  TEXT NOT NULL,
    read_only    INTEGER NOT NULL DEFAULT 0,
    project      TEXT,             -- what a call that names no project works on
    created_at   TEXT NOT NULL,
    expires_at   TEXT,             -- NULL: never
    revoked_at   TEXT,
    used_at      TEXT,
    window_start INTEGER NOT NULL DEFAULT 0,  -- the minute counted (seconds since 1970 / 60)
    window_count INTEGER NOT NULL DEFAULT 0
);
