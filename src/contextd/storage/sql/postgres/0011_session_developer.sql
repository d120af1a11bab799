-- Sessions per developer (as SQLite's 0011): each developer has at most one open session on
-- a project.
ALTER TABLE sessions ADD COLUMN developer TEXT COLLATE "C" NOT NULL DEFAULT '';
DROP INDEX sessions_one_open_per_project;
CREATE UNIQUE INDEX sessions_one_open_per_developer
    ON sessions(project_id, developer) WHERE ended_at IS NULL;
