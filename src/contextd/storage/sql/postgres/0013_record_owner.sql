-- Whose a record is (as SQLite's 0013): '' for the team's, else the developer a personal
-- record belongs to; only they see it. Records stored before this are the team's.
ALTER TABLE records ADD COLUMN owner TEXT COLLATE "C" NOT NULL DEFAULT '';
