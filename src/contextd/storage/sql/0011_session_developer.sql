-- Sessions per developer: on a team server many people work on one project at once, each with
-- at most one open session there. A store in a home has one developer, named ''.
ALTER TABLE sessions ADD COLUMN developer TEXT NOT NULL DEFAULT '';
DROP INDEX sessions_one_open_per_project;
CREATE UNIQUE INDEX sessions_one_open_per_developer
    ON sessions(project_id, developer) WHERE ended_at IS NULL;
