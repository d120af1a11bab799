-- As SQLite's 0018: how far each session's transcript was read for proposals, and how the
-- last reading went.
ALTER TABLE capture_sessions ADD COLUMN extracted_bytes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE capture_sessions ADD COLUMN extracted_at TEXT COLLATE "C";
ALTER TABLE capture_sessions ADD COLUMN extraction TEXT COLLATE "C";
-- The files the session's edit hooks saw it change: the end of a turn needs no `git status`.
ALTER TABLE capture_sessions ADD COLUMN edited TEXT COLLATE "C" NOT NULL DEFAULT '[]';
-- The commits the post-commit hook saw the session make ([sha, subject] pairs): no `git log` at its end.
ALTER TABLE capture_sessions ADD COLUMN commits_seen TEXT COLLATE "C" NOT NULL DEFAULT '[]';
