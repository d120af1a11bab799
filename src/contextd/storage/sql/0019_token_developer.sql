-- The developer a token acts for, when it is not the token's name: one developer may hold a
-- token per machine ("alice-laptop", "alice-desktop") and see the same personal records
-- through each. NULL: the token's name, as before.
ALTER TABLE http_tokens ADD COLUMN developer TEXT;
