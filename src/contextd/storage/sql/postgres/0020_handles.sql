-- Each record's handle (as SQLite's 0020): a kind letter and a number, counted up per kind
-- across the store and never given twice; it replaces the short id, an id prefix.
DROP INDEX records_short_id;
ALTER TABLE records RENAME COLUMN short_id TO handle;

CREATE TABLE record_handles (kind TEXT PRIMARY KEY, last INTEGER NOT NULL);

WITH numbered AS (
    SELECT id, CASE kind WHEN 'memory' THEN 'M' WHEN 'decision' THEN 'D'
                         WHEN 'constraint' THEN 'C' WHEN 'pipeline' THEN 'P' ELSE 'K' END
               || row_number() OVER (PARTITION BY kind ORDER BY created_at, id) AS handle
    FROM records
)
UPDATE records SET handle = numbered.handle FROM numbered WHERE numbered.id = records.id;

INSERT INTO record_handles(kind, last) SELECT kind, count(*) FROM records GROUP BY kind;

CREATE UNIQUE INDEX records_handle ON records(handle);
