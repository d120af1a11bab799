-- The duplicate check looks every new record's title up by kind, scope and lower(title):
-- without this index that lookup read the whole table on each write.
CREATE INDEX records_title ON records(kind, project_id, lower(title));
