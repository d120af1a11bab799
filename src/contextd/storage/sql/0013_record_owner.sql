-- Whose a record is: '' for the team's, else the developer a personal record belongs to (see
-- storage/owners.py). A home's store has one developer and keeps every row the team's; the
-- column is here so that both schemas are one, and a store copies either way.
ALTER TABLE records ADD COLUMN owner TEXT NOT NULL DEFAULT '';
