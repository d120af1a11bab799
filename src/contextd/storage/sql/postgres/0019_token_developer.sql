-- The developer a token acts for, when it is not the token's name (as SQLite's 0019).
ALTER TABLE http_tokens ADD COLUMN developer TEXT COLLATE "C";
