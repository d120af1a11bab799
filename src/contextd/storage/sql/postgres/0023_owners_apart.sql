-- A developer's role sees, makes and revokes only the tokens acting for it (the developer
-- before any '/name' that splits a shared role); a member of the role that owns this table
-- (who administers the team's tokens, and runs `contextd serve`) sees them all. The owner
-- itself is not held by the policy (no FORCE).
ALTER TABLE http_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY developer_own_tokens ON http_tokens
    USING (
        split_part(coalesce(developer, name), '/', 1) = current_user
        OR pg_has_role(
            current_user,
            (SELECT tableowner FROM pg_tables
             WHERE schemaname = current_schema() AND tablename = 'http_tokens'),
            'MEMBER'
        )
    );
