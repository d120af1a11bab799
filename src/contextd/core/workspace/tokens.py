"""Bearer tokens for `contextd serve`: each acts for one developer, by default the one it is
named after (a developer may hold one per machine, each naming them). A token is shown
once, when it is made; the store keeps only a hash of its secret. A presented token is found
by its public part and its secret compared in constant time; a revoked or expired one admits
no one. Every check reads the store, so a revocation holds at once in every serve process.

Tokens are administered by the home's owner, or on a team server by a member of the role
that owns contextd's tables; any other developer makes, lists and revokes only their own.
"""

import hashlib
import hmac
import re
import secrets
import time
from datetime import UTC, datetime, timedelta

from msgspec import Struct

from contextd.clock import now, parse_span, to_iso
from contextd.credentials.scan import CONTEXTD_TOKEN, find_secrets
from contextd.errors import ConflictError, InvalidInputError, NotFoundError, StoreError
from contextd.storage import http_tokens as rows
from contextd.storage.store import Database

__all__ = ["PREFIX", "Caller", "Issued", "TokenService", "TokenRow"]

TokenRow = rows.TokenRow
PREFIX = "ctd_"  # what a contextd token begins with (its shape: secrets.CONTEXTD_TOKEN)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")


class Caller(Struct, frozen=True):
    """Who a request comes from, as its token says."""

    developer: str  # whom the token acts for
    token: str  # the token's name
    read_only: bool
    project: str | None  # what a call that names no project works on
    lookup: str  # the token's public part (for counting its requests)


class Issued(Struct, frozen=True):
    """A token just made: its row, and the token itself (shown once, kept nowhere)."""

    row: TokenRow
    token: str


class TokenService:
    """The tokens of one store."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def administering(self) -> bool:
        """Whether this store's user manages every developer's tokens (see the module)."""
        return rows.administers(self._db.connection())

    def create(
        self,
        name: str,
        *,
        read_only: bool = False,
        project: str | None = None,
        expires: str = "90d",
        developer: str | None = None,
    ) -> Issued:
        """A new token `name` acting for `developer` (by default `name`; for a developer who
        does not administer tokens, themself), read-only or not, working on `project` when a
        call names none, valid for `expires` (`90d`, `12h`; `never`).

        Raises:
            InvalidInputError: the name, the developer or the span is not one contextd can use.
            ConflictError: a token of that name is in use (revoke it first).
            StoreError: it would act for another developer, and this user does not administer
                tokens.
        """
        _check_name(name, "a token")
        if developer is not None:
            _check_name(developer, "a developer", option="--developer ")
        seconds = parse_span(expires)
        if seconds is None:
            raise InvalidInputError(
                f"--expires {expires!r} is not a length of time; give one like 90d, 12h or 2w, "
                "or `never`."
            )
        who = self._acting_for(developer or name, given=developer is not None)
        stamp = now()
        ends = to_iso(datetime.now(UTC) + timedelta(seconds=seconds)) if seconds else None
        lookup = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(12))
        secret = secrets.token_urlsafe(32)
        row = TokenRow(
            name, who, lookup, _digest(secret), read_only, project, stamp, ends, None, None
        )
        with self._db.transaction() as conn:
            existing = rows.get_token(conn, name)
            if existing is not None and _usable(existing, stamp):
                raise ConflictError(
                    f"A token named {name!r} is in use; `contextd token revoke {name}` first, "
                    "then create it again."
                )
            rows.delete_token(conn, name)  # a revoked or expired one gives way
            if not rows.insert_token(conn, row):
                raise ConflictError(
                    f"A token named {name!r} is in use by another developer; choose another name."
                )
        return Issued(row, f"{PREFIX}{lookup}_{secret}")

    def list_tokens(self) -> list[TokenRow]:
        """Every token for an administrator; a developer's own for anyone else."""
        listed = rows.list_tokens(self._db.connection())
        if self.administering():
            return listed
        return [row for row in listed if _acts_for(row.developer, self._db.developer)]

    def revoke(self, name: str) -> TokenRow:
        """Revoke the token named `name` (idempotent).

        Raises:
            NotFoundError: there is no such token, or it is another developer's and this user
                does not administer tokens (the team server shows such a user none).
        """
        with self._db.transaction() as conn:
            found = rows.get_token(conn, name)
            if found is not None and not self._may_manage(found.developer):
                found = None
            if found is not None:
                rows.revoke_token(conn, name, now())
                found = rows.get_token(conn, name)
        if found is None:
            raise NotFoundError(
                f"No token of yours is named {name!r}; `contextd token list` lists them."
                if not self.administering()
                else f"No token is named {name!r}; `contextd token list` lists them."
            )
        return found

    def _acting_for(self, developer: str, *, given: bool) -> str:
        """Whom a new token acts for: `developer` when this user may make it; a developer's
        own name when they gave none.

        Raises:
            StoreError: `developer` was given, is another's, and this user does not administer.
        """
        if self._may_manage(developer):
            return developer
        me = self._db.developer
        if not given:
            return me
        raise StoreError(
            f"Only an administrator of this store's tokens (a member of the role that owns "
            f"contextd's tables) may make a token for {developer!r}; you ({me}) may make "
            "tokens for yourself: leave out --developer."
        )

    def _may_manage(self, developer: str) -> bool:
        return _acts_for(developer, self._db.developer) or self.administering()

    def admit(self, presented: str) -> Caller | None:
        """Who `presented` (the bearer token of a request) is, or None: malformed, unknown,
        revoked or expired alike (a caller learns nothing of which)."""
        shape = CONTEXTD_TOKEN.fullmatch(presented)
        if shape is None:
            return None
        row = rows.get_by_lookup(self._db.connection(), shape.group(1))
        if row is None:
            return None
        if not hmac.compare_digest(row.secret_hash, _digest(shape.group(2))):
            return None
        if not _usable(row, now()):
            return None
        return Caller(row.developer, row.name, row.read_only, row.project, row.lookup)

    def count_request(self, caller: Caller) -> int:
        """Count a request of the caller's; how many it made in this minute so far (every
        process serving this store counts into the same number)."""
        minute = int(time.time() // 60)
        return rows.count_request(self._db.connection(), caller.lookup, minute, now())


def _acts_for(developer: str, me: str) -> bool:
    """Whether a token acting for `developer` is `me`'s: the same developer, or one of the
    people sharing my login role (`role/name`) when I am that role itself."""
    return bool(me) and me in (developer, developer.split("/", 1)[0])


def _check_name(value: str, what: str, *, option: str = "") -> None:
    """A token's or developer's name: a short word people and the store can show.

    Raises:
        InvalidInputError: it looks like a credential (scanned before it is echoed: it is shown in
            lists and on the developer's sessions), or it is not a short word.
    """
    if find_secrets(value):
        raise InvalidInputError(
            f"The name given for {what} looks like a credential; name it after the developer "
            "instead."
        )
    if not _NAME.fullmatch(value):
        raise InvalidInputError(
            f"{option}{value!r} cannot name {what}: use 1-64 letters, digits, '.', '_', '@' or "
            "'-', starting with a letter or digit."
        )


def _digest(secret: str) -> str:
    # The secret is 256 random bits: a fast hash is as safe as a slow one against guessing.
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _usable(row: TokenRow, stamp: str) -> bool:
    return row.revoked_at is None and (row.expires_at is None or row.expires_at > stamp)
