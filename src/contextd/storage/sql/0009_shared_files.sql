-- Team memory in the repository: a shared record lives in a file under .contextd/records/ of
-- each checkout (an attached work tree) that holds it; the store indexes those files per
-- checkout, so what a query from a work tree sees is what that checkout holds.

-- 0: a record of this store only; 1: it lives in repository files, and is visible from a
-- checkout only when one of that checkout's files holds it; 2: private, never shared.
ALTER TABLE records ADD COLUMN shared INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1, 2));
-- The hash of the file text the row was last written to or read from: a checkout file with
-- this hash needs no parsing (a branch switch back rewrites files with known content).
ALTER TABLE records ADD COLUMN file_digest TEXT;

-- Each record file of each checkout as last read: its stat (to notice a change without reading
-- it), its content's hash, and the record it holds, or why it was not taken in.
CREATE TABLE shared_files (
    checkout    TEXT NOT NULL REFERENCES project_paths(path) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    digest      TEXT NOT NULL,
    record_id   TEXT,
    problem     TEXT,
    PRIMARY KEY (checkout, name),
    CHECK ((record_id IS NULL) != (problem IS NULL))
);
CREATE INDEX shared_files_record ON shared_files(record_id, checkout);
