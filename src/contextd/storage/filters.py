"""The one record filter: which records a listing, a count or a search may return, as SQL in
either backend's dialect."""

from msgspec import Struct

from contextd.models import Kind, Status
from contextd.provenance import FROM_FILES, FROM_IMPORT, from_peer
from contextd.storage.dialect import Dialect

__all__ = ["RecordFilter", "in_reach"]


def in_reach(alias: str, project_id: str | None) -> tuple[str, list[object]]:
    """The one rule of which records a project sees: its own, those of the group it belongs
    to, and the global ones (no project: the global ones only). As SQL over `alias`'s
    project_id; `reach.Reach` ranks the same three tiers."""
    return (
        f"({alias}.project_id = ? OR {alias}.project_id IS NULL OR {alias}.project_id IN "
        "(SELECT group_id FROM group_members WHERE project_id = ?))",
        [project_id, project_id],
    )


class RecordFilter(Struct, frozen=True):
    """Which records a listing or search may return: those in the reach of `project_id` (its
    own, its group's and the global ones; None means global only)."""

    project_id: str | None
    kinds: tuple[Kind, ...] = ()
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    tags: tuple[str, ...] = ()
    category: str | None = None
    since: str | None = None
    before: str | None = None
    dates_by: str = "created"  # or "verified": which time since/before compare with
    every_project: bool = False  # maintenance only: ignore the project scope
    # The checkout (attached work tree) whose view applies: a shared record is seen only when
    # one of that checkout's files holds it. None: every shared record of the project.
    checkout: str | None = None
    # Whose checkpoints count: a checkpoint made in another developer's session is left out
    # (where *this* developer's work stopped). None: everyone's.
    developer: str | None = None
    # Only what this developer wrote here (through the CLI, an agent, a hook, the web view):
    # not what teammates wrote, nor what arrived by sync, repository files or an import.
    # None: anyone's.
    written_by: str | None = None

    @property
    def within_scope_index(self) -> bool:
        """Whether where() tests only columns that the index records_seq_scope holds."""
        return not (self.tags or self.category or self.since or self.before)

    def where(self, dialect: Dialect, alias: str = "records") -> tuple[str, list[object]]:
        """SQL condition and parameters for this filter, in `dialect`."""
        clauses = ["1 = 1"]
        params: list[object] = []
        if not self.every_project:
            reach, params = in_reach(alias, self.project_id)
            clauses = [reach]
        visible, shown = dialect.visible("records", alias)
        clauses.append(visible)
        params.extend(shown)
        if self.statuses:
            clauses.append(f"{alias}.status IN ({', '.join('?' for _ in self.statuses)})")
            params.extend(str(s) for s in self.statuses)
        if self.kinds:
            clauses.append(f"{alias}.kind IN ({', '.join('?' for _ in self.kinds)})")
            params.extend(str(k) for k in self.kinds)
        if self.category:
            clauses.append(f"{alias}.category = ?")
            params.append(self.category)
        moment = "verified_at" if self.dates_by == "verified" else "created_at"
        if self.since:
            clauses.append(f"{alias}.{moment} >= ?")
            params.append(self.since)
        if self.before:
            clauses.append(f"{alias}.{moment} < ?")
            params.append(self.before)
        for tag in self.tags:
            clauses.append(dialect.json_list_has(f"{alias}.tags"))
            params.append(tag)
        if self.checkout is not None:
            clauses.append(
                f"({alias}.shared != 1 OR EXISTS (SELECT 1 FROM shared_files f "
                f"WHERE f.record_id = {alias}.id AND f.checkout = ?))"
            )
            params.append(self.checkout)
        if self.developer is not None:
            clauses.append(
                f"({alias}.kind != 'checkpoint' OR {alias}.session_id IS NULL OR "
                f"{alias}.session_id IN (SELECT id FROM sessions WHERE developer = ?))"
            )
            params.append(self.developer)
        if self.written_by is not None:
            clauses.append(
                f"EXISTS (SELECT 1 FROM record_log AS l WHERE l.record_id = {alias}.id "
                "AND l.event = 'created' AND l.actor = ? AND l.via NOT LIKE ? "
                "AND l.via NOT IN (?, ?))"
            )
            params += [self.written_by, from_peer("%"), FROM_FILES, FROM_IMPORT]
        return " AND ".join(clauses), params
