"""SQL for the bearer tokens `contextd serve` admits: one row per developer, the secret kept
only as a hash, and the count of the token's requests in the current minute (in the store,
so that every serve process on it counts together).

Who administers them: in a home's store its owner (no one else can open the file); on a team
server a member of the role that owns contextd's tables. There the server itself holds every
other developer to their own tokens (row-level security, migration 0023), so a developer's
role cannot mint, read or revoke another's tokens with plain SQL either."""

from msgspec import Struct

from contextd.storage.connection import Connection

__all__ = [
    "TokenRow",
    "administers",
    "count_request",
    "delete_token",
    "get_by_lookup",
    "get_token",
    "insert_token",
    "list_tokens",
    "revoke_token",
]


class TokenRow(Struct, frozen=True):
    name: str
    developer: str  # whom it acts for: its name unless it was given another
    lookup: str
    secret_hash: str
    read_only: bool
    project: str | None
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    used_at: str | None


_COLUMNS = (
    "name, coalesce(developer, name), lookup, secret_hash, read_only, project, created_at, "
    "expires_at, revoked_at, used_at"
)
_WRITTEN = (
    "name, developer, lookup, secret_hash, read_only, project, created_at, expires_at, "
    "revoked_at, used_at"
)


def _row(values: tuple[object, ...]) -> TokenRow:
    name, developer, lookup, secret_hash, read_only, project, created, expires, revoked, used = (
        values
    )
    return TokenRow(
        str(name),
        str(developer),
        str(lookup),
        str(secret_hash),
        bool(read_only),
        None if project is None else str(project),
        str(created),
        None if expires is None else str(expires),
        None if revoked is None else str(revoked),
        None if used is None else str(used),
    )


def insert_token(conn: Connection, token: TokenRow) -> bool:
    """Insert the token; False when its name is taken (on a team server perhaps by a token
    this role may not see)."""
    written = conn.execute(
        f"INSERT INTO http_tokens({_WRITTEN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO NOTHING",
        (
            token.name,
            None if token.developer == token.name else token.developer,
            token.lookup,
            token.secret_hash,
            int(token.read_only),
            token.project,
            token.created_at,
            token.expires_at,
            token.revoked_at,
            token.used_at,
        ),
    )
    return written.rowcount == 1


def delete_token(conn: Connection, name: str) -> None:
    conn.execute("DELETE FROM http_tokens WHERE name = ?", (name,))


def get_token(conn: Connection, name: str) -> TokenRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM http_tokens WHERE name = ?", (name,)).fetchone()
    return _row(tuple(row)) if row else None


def get_by_lookup(conn: Connection, lookup: str) -> TokenRow | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM http_tokens WHERE lookup = ?", (lookup,)).fetchone()
    return _row(tuple(row)) if row else None


def list_tokens(conn: Connection) -> list[TokenRow]:
    return [
        _row(tuple(r)) for r in conn.execute(f"SELECT {_COLUMNS} FROM http_tokens ORDER BY name")
    ]


def revoke_token(conn: Connection, name: str, revoked_at: str) -> bool:
    """Revoke the token (idempotent); False when there is none of that name."""
    conn.execute(
        "UPDATE http_tokens SET revoked_at = coalesce(revoked_at, CAST(? AS TEXT)) WHERE name = ?",
        (revoked_at, name),
    )
    return get_token(conn, name) is not None


def count_request(conn: Connection, lookup: str, minute: int, used_at: str) -> int:
    """Count one request of the token in `minute`, in one statement (atomic on either
    backend, whichever process runs it); the requests counted in that minute so far."""
    rows = conn.execute(
        "UPDATE http_tokens SET "
        "window_count = CASE WHEN window_start = ? THEN window_count + 1 ELSE 1 END, "
        "window_start = ?, used_at = ? WHERE lookup = ? RETURNING window_count",
        (minute, minute, used_at, lookup),
    ).fetchall()  # read to the end: SQLite holds the write until the statement is done
    return int(rows[0][0]) if rows else 0


def administers(conn: Connection) -> bool:
    """Whether this connection may manage every developer's tokens: always in a home's store;
    on a team server when its role is a member of the role owning the tokens' table (a
    superuser is a member of every role)."""
    if conn.dialect.name == "sqlite":
        return True
    found = conn.execute(
        "SELECT pg_has_role(current_user, tableowner, 'MEMBER') FROM pg_tables "
        "WHERE schemaname = current_schema() AND tablename = 'http_tokens'"
    ).fetchone()
    return bool(found and found[0])
