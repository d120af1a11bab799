-- Full-text candidates are joined to their records by seq to apply the search's scope. Read
-- from the table, each of thousands of matches cost a visit to a wide row (its body and
-- text); this index holds every column the scope tests, so the join never leaves it.
CREATE INDEX records_seq_scope
    ON records(seq, project_id, status, kind, shared, session_id, id);
