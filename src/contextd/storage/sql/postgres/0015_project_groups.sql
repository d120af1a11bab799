-- Project groups (as SQLite's 0015): a group is a row of projects that no folder attaches
-- to; its members see its records, below their own and above the global ones.
ALTER TABLE projects ADD COLUMN is_group INTEGER NOT NULL DEFAULT 0;

-- A project belongs to one group at most.
CREATE TABLE group_members (
    project_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    group_id    TEXT COLLATE "C" NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    joined_at   TEXT COLLATE "C" NOT NULL
);
CREATE INDEX group_members_group ON group_members(group_id);
