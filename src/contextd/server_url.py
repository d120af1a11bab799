"""The team server's address, `[store] url = "postgresql://…"`: what may be written in
config.toml (never a password: it comes from PGPASSWORD or ~/.pgpass) and how a message names
the server. The standard library only (config.py checks it)."""

from urllib.parse import parse_qsl, urlsplit, urlunsplit

__all__ = ["SCHEMES", "redact", "url_problem"]

SCHEMES = ("postgresql", "postgres")


def url_problem(url: str) -> str | None:
    """Why `url` cannot name the team server, as a sentence that never quotes it (it may hold
    a secret); None when it can."""
    try:
        parts = urlsplit(url)
        _ = parts.port  # raises for a port that is not a number
    except ValueError:
        return "store.url is not a valid URL; write it as postgresql://USER@HOST:PORT/DATABASE."
    if parts.scheme not in SCHEMES:
        return (
            "store.url must start with postgresql:// (a PostgreSQL server with pgvector); "
            "leave it empty for the local SQLite store."
        )
    options = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if parts.password is not None or "password" in options:
        return (
            "store.url must not hold a password (config.toml is not a place for secrets); "
            "remove it from the URL and give it in PGPASSWORD or ~/.pgpass."
        )
    if not parts.hostname and "host" not in options:
        return "store.url names no server; write it as postgresql://USER@HOST:PORT/DATABASE."
    return None


def redact(url: str) -> str:
    """The URL as a message may show it: scheme, user, host, port and database, no query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{parts.username}@{host}" if parts.username else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
