-- Projects, records of every kind, their full-text index, tombstones and sessions.

CREATE TABLE projects (
    id          TEXT PRIMARY KEY,
    slug        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    git_remote  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX projects_git_remote ON projects(git_remote);

-- A project may be checked out in several folders (clones, worktrees); none when it arrived by sync.
CREATE TABLE project_paths (
    path        TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    attached_at TEXT NOT NULL
);
CREATE INDEX project_paths_project ON project_paths(project_id);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    agent       TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT,
    summary     TEXT
);
CREATE UNIQUE INDEX sessions_one_open_per_project ON sessions(project_id) WHERE ended_at IS NULL;

-- seq is the stable integer key the external-content FTS index needs (VACUUM keeps it).
CREATE TABLE records (
    seq             INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    project_id      TEXT REFERENCES projects(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL
                    CHECK (kind IN ('memory', 'decision', 'constraint', 'pipeline', 'checkpoint')),
    category        TEXT,
    title           TEXT NOT NULL,
    body            TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(body)),
    body_text       TEXT NOT NULL DEFAULT '',
    tags            TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    retrieval_hints TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(retrieval_hints)),
    origin          TEXT NOT NULL DEFAULT 'user' CHECK (origin IN ('user', 'agent', 'import')),
    priority        INTEGER NOT NULL DEFAULT 3,
    status          TEXT NOT NULL DEFAULT 'active'
                    CHECK (status IN ('active', 'superseded', 'archived')),
    superseded_by   TEXT,
    related_to      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(related_to)),
    session_id      TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    verified_at     TEXT NOT NULL
);
CREATE INDEX records_scope ON records(project_id, status, kind);
CREATE INDEX records_superseded_by ON records(superseded_by);

CREATE VIRTUAL TABLE records_fts USING fts5(
    title, body_text, tags, retrieval_hints,
    content = 'records', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER records_fts_insert AFTER INSERT ON records BEGIN
    INSERT INTO records_fts(rowid, title, body_text, tags, retrieval_hints)
    VALUES (new.seq, new.title, new.body_text, new.tags, new.retrieval_hints);
END;

CREATE TRIGGER records_fts_delete AFTER DELETE ON records BEGIN
    INSERT INTO records_fts(records_fts, rowid, title, body_text, tags, retrieval_hints)
    VALUES ('delete', old.seq, old.title, old.body_text, old.tags, old.retrieval_hints);
END;

CREATE TRIGGER records_fts_update AFTER UPDATE OF title, body_text, tags, retrieval_hints ON records
BEGIN
    INSERT INTO records_fts(records_fts, rowid, title, body_text, tags, retrieval_hints)
    VALUES ('delete', old.seq, old.title, old.body_text, old.tags, old.retrieval_hints);
    INSERT INTO records_fts(rowid, title, body_text, tags, retrieval_hints)
    VALUES (new.seq, new.title, new.body_text, new.tags, new.retrieval_hints);
END;

-- A deletion is a dated fact that later travels between machines.
CREATE TABLE tombstones (
    id          TEXT PRIMARY KEY,
    project_id  TEXT,
    deleted_at  TEXT NOT NULL
);
