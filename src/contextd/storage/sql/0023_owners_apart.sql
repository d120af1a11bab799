-- The personal records the home's owner wrote belong to them ('~', storage/owners.py), no
-- longer to the team (''): a token of another developer that `contextd serve` admits does
-- not see them. (On the team server every personal record always had its developer, and this
-- migration holds each developer to their own tokens instead.)
UPDATE records SET owner = '~'
WHERE owner = ''
  AND (shared = 2 OR kind = 'checkpoint'
       OR (project_id IS NULL AND category IN ('preference', 'user')));
UPDATE record_log SET owner = '~'
WHERE owner = '' AND (private = 1 OR record_id IN (SELECT id FROM records WHERE owner = '~'));
