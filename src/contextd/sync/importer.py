"""Applying a bundle to this store by the merge rules, in one transaction."""

import json
from collections import Counter
from collections.abc import Callable

from msgspec import Struct, field
from msgspec.structs import replace

from contextd.clock import now
from contextd.models import Group, Project, Record, Status
from contextd.provenance import changes_via, from_peer
from contextd.storage import groups as group_rows
from contextd.storage import projects as project_rows
from contextd.storage import records as record_rows
from contextd.storage import sync_state as sync_rows
from contextd.storage.connection import Connection
from contextd.storage.filters import RecordFilter
from contextd.sync.admission import Refusals, record_where
from contextd.sync.bundle import Bundle, BundleGroup, BundleProject, BundleRecord, record_to_json
from contextd.sync.merge import Outcome, decide_record, decide_tombstone

__all__ = ["ImportReport", "Restates", "apply_bundle"]

# Why a new record restates one stored here (None: it does not); the ids are records of the
# bundle it replaces, which it may repeat.
Restates = Callable[[Record, frozenset[str]], str | None]
_MAX_CHAIN = 10_000


class ImportReport(Struct):
    """What a merge did (or, in a dry run, would do)."""

    source: str  # the store id the bundle came from
    dry_run: bool
    counts: Counter[Outcome] = field(default_factory=Counter)
    conflicts: list[str] = field(default_factory=list)  # ids of records kept with a divergence
    projects_created: list[str] = field(default_factory=list)  # slugs
    groups_created: list[str] = field(default_factory=list)  # slugs
    members_changed: int = 0  # projects that joined or left a group
    written: list[Record] = field(default_factory=list)  # added or updated: need vectors

    def count(self, outcome: Outcome) -> int:
        return self.counts[outcome]

    def view(self, store_id: str) -> dict[str, object]:
        """Counts for people and scripts; `store_id` is the store that merged."""
        c = self.counts
        return {
            "store_id": store_id,
            "source": self.source,
            "dry_run": self.dry_run,
            "added": c[Outcome.ADD],
            "updated": c[Outcome.UPDATE],
            "unchanged": c[Outcome.UNCHANGED] + c[Outcome.STAYS_DELETED],
            "kept_local": c[Outcome.KEEP_LOCAL],
            "deleted": c[Outcome.DELETE],
            "conflicts": c[Outcome.CONFLICT],
            "tombstones_received": c[Outcome.NEW_TOMBSTONE],
            "conflict_ids": list(self.conflicts),
            "projects_created": list(self.projects_created),
            "groups_created": list(self.groups_created),
            "members_changed": self.members_changed,
        }


def apply_bundle(
    conn: Connection,
    bundle: Bundle,
    peer: str,
    dry_run: bool,
    refusals: Refusals,
    restates: Restates | None = None,
) -> ImportReport:
    """Merge an admitted `bundle` into the store; the caller holds the transaction (and rolls
    it back for a dry run, or when this raises). `peer` names the other side in the conflict
    list.

    Raises:
        InvalidInputError: a record would move between projects, a deletion reaches into a
            project the bundle does not name, a new record restates a stored one, or the
            supersede links would loop; nothing may be kept.
    """
    report = ImportReport(bundle.store_id, dry_run)
    ids = [e.record.id for e in bundle.records] + [t.id for t in bundle.tombstones]
    everything = RecordFilter(None, statuses=(), every_project=True)
    local = record_rows.records_in_scope(conn, ids, everything)
    histories = sync_rows.versions_of(conn, ids)
    deleted = sync_rows.tombstones_of(conn, ids)
    projects = _ProjectMap(conn, bundle.projects, report, bundle.groups)
    if restates is not None:
        _refuse_restatements(bundle, local, deleted, projects, restates, refusals)
    for index, entry in enumerate(bundle.records):
        where = record_where(index, entry.record.id)
        held = local.get(entry.record.id)
        if held is not None and not projects.same_place(held, entry.record.project_id):
            refusals.add(where, _moves(held))
            continue
        with changes_via(from_peer(peer)):
            _merge_record(conn, entry, local, histories, deleted, projects, peer, report)
    for index, tombstone in enumerate(bundle.tombstones):
        held = local.get(tombstone.id)
        if held is not None and not projects.same_place(held, tombstone.project_id):
            refusals.add(f"deletion {index + 1} ({tombstone.id})", _moves(held, "delete"))
            continue
        outcome = decide_tombstone(
            tombstone.deleted_at, held.updated_at if held else None, deleted.get(tombstone.id)
        )
        report.counts[outcome] += 1
        if outcome is Outcome.DELETE and held is not None:
            with changes_via(from_peer(peer)):
                record_rows.delete_record(conn, held, tombstone.deleted_at)
        elif outcome is Outcome.NEW_TOMBSTONE:
            owner = projects.find(tombstone.project_id) if tombstone.project_id else None
            sync_rows.upsert_tombstone(
                conn, sync_rows.Tombstone(tombstone.id, owner, tombstone.deleted_at)
            )
    _merge_members(conn, bundle, projects, report)
    _refuse_bad_chains(conn, report.written, refusals)
    refusals.raise_if_any()
    return report


def _merge_members(
    conn: Connection, bundle: Bundle, projects: "_ProjectMap", report: ImportReport
) -> None:
    """Each group's members as the newer version of the group has them, for the projects
    the bundle names (a one-project bundle decides that project's membership alone); a
    project that belongs to another group here stays in it."""
    for entry in bundle.groups:
        group_id = projects.local_id(entry.id)
        held = group_rows.find_group(conn, group_id)
        if held is None or held.updated_at > entry.updated_at:
            continue  # changed here since: this store's members stand
        members = set(entry.members)
        for project in bundle.projects:
            local = projects.local_id(project.id) if project.id in members else None
            local = local or projects.find(project.id)
            if local is None:
                continue
            current = group_rows.group_of(conn, local)
            if project.id in members and current is None:
                group_rows.add_member(conn, group_id, local, entry.updated_at)
                report.members_changed += 1
            elif project.id not in members and current == group_id:
                group_rows.remove_member(conn, group_id, local, entry.updated_at)
                report.members_changed += 1


def _moves(held: Record, verb: str = "change") -> str:
    where = (
        "a global record" if held.project_id is None else f"a record of project {held.project_id}"
    )
    return (
        f"would {verb} {held.id}, {where} here, from another project; a bundle changes only the "
        "projects it names and never moves a record between projects"
    )


def _refuse_restatements(
    bundle: Bundle,
    local: dict[str, Record],
    deleted: dict[str, str],
    projects: "_ProjectMap",
    restates: Restates,
    refusals: Refusals,
) -> None:
    """A new active record that repeats one stored here is refused, as `contextd add` refuses
    it; the bundle's own records are checked against the store only, not against each other."""
    replaced_by: dict[str, set[str]] = {}
    for entry in bundle.records:
        if entry.record.superseded_by:
            replaced_by.setdefault(entry.record.superseded_by, set()).add(entry.record.id)
    for index, entry in enumerate(bundle.records):
        record = entry.record
        if record.id in local or record.id in deleted or record.status is not Status.ACTIVE:
            continue
        # Compared within the local project it joins (a new project: with the global records).
        place = record.project_id and (projects.find(record.project_id) or record.project_id)
        why = restates(replace(record, project_id=place), frozenset(replaced_by.get(record.id, ())))
        if why:
            refusals.add(record_where(index, record.id), why)


def _refuse_bad_chains(conn: Connection, written: list[Record], refusals: Refusals) -> None:
    """Supersede links of the merged records must end (no loop) and stay in their project
    (a record is replaced by one of its own project or a global one)."""
    for record in written:
        seen = {record.id}
        current = record
        for _ in range(_MAX_CHAIN):
            if current.superseded_by is None:
                break
            successor = record_rows.get_record(conn, current.superseded_by)
            if successor is None:
                break  # not here (left out of a one-project bundle): nothing to follow
            if successor.project_id not in (current.project_id, None):
                refusals.add(
                    f"record {current.id}",
                    f"is superseded by {successor.id} of another project",
                )
                return
            if successor.id in seen:
                refusals.add(
                    f"record {record.id}",
                    "is part of a supersede cycle (records replacing each other in a loop)",
                )
                return
            seen.add(successor.id)
            current = successor


def _merge_record(
    conn: Connection,
    entry: BundleRecord,
    local: dict[str, Record],
    histories: dict[str, set[str]],
    deleted: dict[str, str],
    projects: "_ProjectMap",
    peer: str,
    report: ImportReport,
) -> None:
    incoming = entry.record
    held = local.get(incoming.id)
    outcome = decide_record(
        incoming.updated_at,
        set(entry.history),
        held.updated_at if held else None,
        histories.get(incoming.id, set()),
        deleted.get(incoming.id),
    )
    report.counts[outcome] += 1
    if outcome is Outcome.STAYS_DELETED:
        return
    if outcome is Outcome.CONFLICT and held is not None:
        report.conflicts.append(incoming.id)
        sync_rows.upsert_conflict(conn, _conflict(incoming, entry.history, held, peer))
        return
    if outcome in (Outcome.ADD, Outcome.UPDATE):
        owner = projects.local_id(incoming.project_id) if incoming.project_id else None
        session = held.session_id if held else None
        record = replace(incoming, project_id=owner, session_id=session)
        if held is None:
            sync_rows.delete_tombstone(conn, record.id)
            record_rows.insert_record(conn, record)
        else:
            record_rows.replace_record(conn, record)
        report.written.append(record)
    # Both sides now hold a version descending from the incoming one.
    sync_rows.add_versions(conn, [(incoming.id, v) for v in {*entry.history, incoming.updated_at}])
    sync_rows.delete_conflict(conn, incoming.id)


def _conflict(
    incoming: Record, history: tuple[str, ...], held: Record, peer: str
) -> sync_rows.ConflictRow:
    return sync_rows.ConflictRow(
        record_id=held.id,
        peer=peer,
        local_updated_at=held.updated_at,
        remote_updated_at=incoming.updated_at,
        remote_record=json.dumps(record_to_json(incoming, history), ensure_ascii=False),
        detected_at=now(),
    )


class _ProjectMap:
    """Which local project each bundle project is: same id, else same normalised git remote,
    else same slug (unless the two remotes differ); created without a folder when none is."""

    def __init__(
        self,
        conn: Connection,
        entries: tuple[BundleProject, ...],
        report: ImportReport,
        groups: tuple[BundleGroup, ...] = (),
    ) -> None:
        self._conn = conn
        self._entries = {p.id: p for p in entries}
        self._groups = {g.id: g for g in groups}
        self._found: dict[str, str | None] = {}
        self._report = report

    def find(self, project_id: str) -> str | None:
        if project_id not in self._found:
            entry = self._entries.get(project_id)
            group = self._groups.get(project_id)
            self._found[project_id] = (
                self._match(entry) if entry else self._match_group(group) if group else None
            )
        return self._found[project_id]

    def same_place(self, held: Record, project_id: str | None) -> bool:
        """Whether a record held here belongs where the bundle says it does (the local
        project matching the bundle's `project_id`, or global for both)."""
        if project_id is None:
            return held.project_id is None
        found = self.find(project_id)
        return found is not None and found == held.project_id

    def local_id(self, project_id: str) -> str:
        found = self.find(project_id)
        if found is not None:
            return found
        group = self._groups.get(project_id)
        if group is not None:  # a group new here: made empty, its members merged after
            slug = project_rows.free_slug(self._conn, group.slug)
            made = Group(group.id, slug, group.name, (), group.created_at, group.created_at)
            group_rows.insert_group(self._conn, made)
            self._report.groups_created.append(slug)
            self._found[project_id] = group.id
            return group.id
        entry = self._entries[project_id]
        slug = project_rows.free_slug(self._conn, entry.slug)
        project = Project(
            entry.id, slug, entry.name, entry.git_remote, (), entry.created_at, entry.updated_at
        )
        project_rows.insert_project(self._conn, project)
        self._report.projects_created.append(slug)
        self._found[project_id] = entry.id
        return entry.id

    def _match_group(self, entry: BundleGroup) -> str | None:
        """The local group of the same id, else of the same slug."""
        for key in (entry.id, entry.slug):
            found = group_rows.find_group(self._conn, key)
            if found is not None and key in (found.id, found.slug):
                return found.id
        return None

    def _match(self, entry: BundleProject) -> str | None:
        same = project_rows.get_project(self._conn, entry.id)
        if same is not None:
            return same.id
        if entry.git_remote:
            by_remote = project_rows.find_by_remote(self._conn, entry.git_remote)
            if by_remote is not None:
                return by_remote.id
        for candidate in project_rows.find_by_slug_or_name(self._conn, entry.slug):
            remotes = {candidate.git_remote, entry.git_remote} - {None}
            if candidate.slug == entry.slug and len(remotes) <= 1:
                return candidate.id
        return None
