-- Each record's short id (as SQLite's 0016): the prefix printed for it when it was stored,
-- kept so that it names the record for good, however many ids begin with it later.
ALTER TABLE records ADD COLUMN short_id TEXT COLLATE "C";

-- Records stored before this: the shortest prefix (eight characters at least, never ending
-- on a dash) that the next smaller id did not share.
WITH ordered AS (
    SELECT id, lag(id) OVER (ORDER BY id) AS previous FROM records
), cuts AS (
    SELECT ordered.id, coalesce((
        SELECT min(k) FROM generate_series(8, 36) AS k
        WHERE ordered.previous IS NULL
           OR substr(ordered.id, 1, k) <> substr(ordered.previous, 1, k)
    ), 36) AS cut
    FROM ordered
)
UPDATE records SET short_id = substr(
    records.id, 1, CASE WHEN substr(records.id, cuts.cut, 1) = '-' THEN cuts.cut + 1
                        ELSE cuts.cut END
)
FROM cuts WHERE cuts.id = records.id;

CREATE INDEX records_short_id ON records(short_id);
