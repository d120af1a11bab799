-- Each record's handle: a kind letter and a number (D12, C3, M40) that a person reads in a
-- listing and types. Numbers count up per kind across the store and are never given twice,
-- a deleted record's included, so a handle names one record from the moment it is printed.
-- It replaces the short id, an id prefix that a later burst of writes could begin too.
DROP INDEX records_short_id;
ALTER TABLE records RENAME COLUMN short_id TO handle;

CREATE TABLE record_handles (kind TEXT PRIMARY KEY, last INTEGER NOT NULL);

-- Records stored before this are numbered in the order they were written.
CREATE TEMP TABLE numbered (id TEXT PRIMARY KEY, handle TEXT NOT NULL);

INSERT INTO numbered(id, handle)
SELECT id, CASE kind WHEN 'memory' THEN 'M' WHEN 'decision' THEN 'D' WHEN 'constraint' THEN 'C'
                     WHEN 'pipeline' THEN 'P' ELSE 'K' END
           || row_number() OVER (PARTITION BY kind ORDER BY created_at, id)
FROM records;

UPDATE records SET handle = (SELECT handle FROM numbered WHERE numbered.id = records.id);

DROP TABLE numbered;

INSERT INTO record_handles(kind, last) SELECT kind, count(*) FROM records GROUP BY kind;

CREATE UNIQUE INDEX records_handle ON records(handle);
