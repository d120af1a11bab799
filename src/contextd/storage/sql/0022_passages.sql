-- The rest of a long record for the meaning arm: `vector` reads the record's start (the model
-- takes ~128 word pieces); `passages` holds one vector per later window of its text, float32
-- little-endian end to end (NULL when the record fits in its first window). A record is as
-- near a query as its nearest window.
ALTER TABLE embeddings ADD COLUMN passages BLOB;
