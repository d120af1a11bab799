"""SSH remotes: naming other machines, surveying them, pulling from and pushing to them."""

import json
import re
from pathlib import Path
from typing import Any

from msgspec import Struct

from contextd.clock import now
from contextd.config import SyncSettings
from contextd.core.workspace.capped import MB, Cap
from contextd.core.writing.validation import checked_text
from contextd.errors import ConflictError, InvalidInputError, NotFoundError, RemoteError
from contextd.storage import sync_state as rows
from contextd.storage.store import Database
from contextd.sync.bundle import bundle_cap, dump_bundle, parse_bundle
from contextd.sync.importer import ImportReport
from contextd.sync.service import SyncService
from contextd.sync.ssh import Limits, RemoteSpec, local_expansion_note, run_remote

__all__ = ["PushReport", "RemoteService", "expansion_warnings", "remote_view", "spec_of"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# A summary or a merge report: small, whatever the store; more is not contextd answering.
_ANSWER = Cap(16 * MB, "an answer of contextd", "check that --command names contextd there")


class PushReport(Struct, frozen=True):
    """What the other machine's merge said (its counts and divergences)."""

    remote: str
    dry_run: bool
    result: dict[str, Any]


def spec_of(remote: rows.RemoteRow) -> RemoteSpec:
    return RemoteSpec(
        remote.target, remote.login_shell, remote.command, remote.remote_home, remote.ssh_options
    )


def remote_view(remote: rows.RemoteRow) -> dict[str, Any]:
    return {
        "name": remote.name,
        "target": remote.target,
        "login_shell": remote.login_shell,
        "command": remote.command,
        "remote_home": remote.remote_home,
        "ssh_options": list(remote.ssh_options),
        "store_id": remote.store_id,
        "last_pull_at": remote.last_pull_at,
        "last_push_at": remote.last_push_at,
    }


def expansion_warnings(spec: RemoteSpec) -> list[str]:
    """Paths that look like this machine's home, expanded by the local shell."""
    notes = (local_expansion_note(v, Path.home()) for v in (spec.command, spec.remote_home) if v)
    return [note.strip() for note in notes if note]


class RemoteService:
    def __init__(self, db: Database, sync: SyncService, settings: SyncSettings) -> None:
        self._db = db
        self._sync = sync
        self._bundle = Limits(bundle_cap(settings.max_bundle_mb), settings.remote_timeout_s)
        self._answer = Limits(_ANSWER, settings.remote_timeout_s)

    def add(self, name: str, spec: RemoteSpec) -> rows.RemoteRow:
        if not _NAME.match(name):
            raise InvalidInputError(
                f"Remote name {name!r} is not usable; use letters, digits, '.', '_' or '-'."
            )
        checked_spec(spec)
        remote = rows.RemoteRow(
            name,
            spec.target,
            spec.login_shell,
            spec.command,
            spec.remote_home,
            spec.ssh_options,
            None,
            None,
            None,
            now(),
        )
        with self._db.transaction() as conn:
            if rows.get_remote(conn, name) is not None:
                raise ConflictError(
                    f"A remote named {name!r} exists; `contextd remote remove {name}` first."
                )
            rows.insert_remote(conn, remote)
        return remote

    def list(self) -> list[rows.RemoteRow]:
        return rows.list_remotes(self._db.connection())

    def get(self, name: str) -> rows.RemoteRow:
        remote = rows.get_remote(self._db.connection(), name)
        if remote is None:
            known = ", ".join(r.name for r in self.list()) or "none yet"
            raise NotFoundError(
                f"No remote named {name!r} (known: {known}); add it with "
                "`contextd remote add NAME [user@]host`."
            )
        return remote

    def remove(self, name: str) -> rows.RemoteRow:
        remote = self.get(name)
        with self._db.transaction() as conn:
            rows.delete_remote(conn, name)
        return remote

    def resolve(self, target: str, override: RemoteSpec | None) -> tuple[str, RemoteSpec, bool]:
        """A configured remote by name (unless options were given for this call), else
        `target` taken as [user@]host; the flag says which."""
        found = rows.get_remote(self._db.connection(), target)
        if found is not None and override is None:
            return found.name, spec_of(found), True
        spec = override or RemoteSpec(target)
        checked_spec(spec)
        return target, spec, False

    def scan(self, spec: RemoteSpec, *, batch: bool, detail: bool = False) -> dict[str, Any]:
        """Counts of what the other store holds (no content is copied); `detail` adds each
        project's kinds by status and memory categories."""
        args = ["bundle", "summary", "--json"] + (["--detail"] if detail else [])
        text = run_remote(spec, args, batch=batch, limits=self._answer)
        return _json(text, spec.target)

    def pull(self, name: str, *, dry_run: bool, batch: bool) -> ImportReport:
        remote = self.get(name)
        args = ["bundle", "export", "--out", "-"]
        text = run_remote(spec_of(remote), args, batch=batch, limits=self._bundle)
        bundle = parse_bundle(text, f"the bundle from {name}")
        if bundle.store_id == self._sync.store_id():
            raise RemoteError(
                f"{name} is this very store (same store id); check its --remote-home."
            )
        report = self._sync.merge(bundle, name, f"the bundle from {name}", dry_run=dry_run)
        if not dry_run:
            with self._db.transaction() as conn:
                rows.stamp_remote(
                    conn, name, peer=bundle.store_id, column="last_pull_at", stamp=now()
                )
        return report

    def push(self, name: str, *, dry_run: bool, batch: bool) -> PushReport:
        remote = self.get(name)
        args = ["bundle", "import", "--file", "-", "--json"] + (["--dry-run"] if dry_run else [])
        payload = dump_bundle(self._sync.export(remember=not dry_run)).encode("utf-8")
        answer = run_remote(spec_of(remote), args, batch=batch, limits=self._answer, stdin=payload)
        result = _json(answer, name)
        if not dry_run:
            with self._db.transaction() as conn:
                peer = result.get("store_id")
                rows.stamp_remote(
                    conn,
                    name,
                    peer=peer if isinstance(peer, str) else None,
                    column="last_push_at",
                    stamp=now(),
                )
        return PushReport(name, dry_run, result)


def checked_spec(spec: RemoteSpec) -> None:
    """A host ssh will not read as an option, and settings that hold no secret (they are
    stored in the database and shown by `remote list`).

    Raises:
        InvalidInputError: the host starts with a dash or is empty, or a setting holds a
            secret or a line break.
    """
    if not spec.target.strip() or spec.target.startswith("-"):
        raise InvalidInputError(
            f"{spec.target!r} is not a host; give [user@]host (a leading dash would be read by "
            "ssh as an option)."
        )
    given = [
        ("host", spec.target),
        ("--command", spec.command),
        ("--remote-home", spec.remote_home),
    ]
    given += [("--ssh-option", option) for option in spec.ssh_options]
    for label, value in given:
        if value is not None:
            checked_text(label, value, label=label, limit=4096, one_line=True)


def _json(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise RemoteError(
            f"contextd on {where} answered something that is not JSON; check that it is "
            "contextd (see --command) and the same version as here."
        )
    return value
