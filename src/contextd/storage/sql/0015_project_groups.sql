-- Project groups: a group is a row of projects (its records are owned by it as a project's
-- are, so every foreign key, tombstone and bundle entry works as for a project) that no folder
-- attaches to; its members see its records, below their own and above the global ones.
ALTER TABLE projects ADD COLUMN is_group INTEGER NOT NULL DEFAULT 0;

-- A project belongs to one group at most.
CREATE TABLE group_members (
    project_id  TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    group_id    TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    joined_at   TEXT NOT NULL
);
CREATE INDEX group_members_group ON group_members(group_id);
