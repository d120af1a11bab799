-- Each record's short id: the prefix printed for it when it was stored (the shortest no other
-- record's id began with then), kept so that it names the record for good. Ids are
-- time-ordered, so a burst of writes shares its first characters and a prefix unique when it
-- was printed can begin several ids later; the one whose short id it is wins.
ALTER TABLE records ADD COLUMN short_id TEXT;

-- Records stored before this: the prefix printed when each was stored is the shortest (eight
-- characters at least) that its predecessor in time, the next smaller id, did not share, and
-- never ends on a dash.
CREATE TEMP TABLE short_cut (id TEXT PRIMARY KEY, cut INTEGER NOT NULL);

INSERT INTO short_cut(id, cut)
WITH RECURSIVE lengths(k) AS (SELECT 8 UNION ALL SELECT k + 1 FROM lengths WHERE k < 36),
ordered AS (SELECT id, lag(id) OVER (ORDER BY id) AS previous FROM records)
SELECT ordered.id, coalesce((
    SELECT min(k) FROM lengths
    WHERE ordered.previous IS NULL OR substr(ordered.id, 1, k) != substr(ordered.previous, 1, k)
), 36)
FROM ordered;

UPDATE records SET short_id = (
    SELECT substr(records.id, 1, CASE WHEN substr(records.id, cut, 1) = '-' THEN cut + 1
                                      ELSE cut END)
    FROM short_cut WHERE short_cut.id = records.id
);

DROP TABLE short_cut;

CREATE INDEX records_short_id ON records(short_id);
