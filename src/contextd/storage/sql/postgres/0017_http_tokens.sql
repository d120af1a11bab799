-- The bearer tokens `contextd serve` admits (as SQLite's 0017).
CREATE TABLE http_tokens (
    name         TEXT COLLATE "C" PRIMARY KEY,
    lookup       TEXT COLLATE "C" NOT NULL UNIQUE,
    secret_hash  TEXT COLLATE "C" NOT NULL,
    read_only    INTEGER NOT NULL DEFAULT 0,
    project      TEXT COLLATE "C",
    created_at   TEXT COLLATE "C" NOT NULL,
    expires_at   TEXT COLLATE "C",
    revoked_at   TEXT COLLATE "C",
    used_at      TEXT COLLATE "C",
    window_start BIGINT NOT NULL DEFAULT 0,
    window_count INTEGER NOT NULL DEFAULT 0
);
