-- The agent files `contextd export` wrote: the hash of the managed block, so a block edited
-- by hand since is refused instead of overwritten.
CREATE TABLE agent_files (
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    target      TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    written_at  TEXT NOT NULL,
    PRIMARY KEY (project_id, path)
);
