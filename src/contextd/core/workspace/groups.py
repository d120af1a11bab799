"""Project groups: several projects of one product sharing records that apply to each of
them, below each project's own and above the global ones. A project belongs to one group at
most; a record is written into a group only from one of its members."""

from collections.abc import Sequence

from msgspec import Struct

from contextd.clock import now
from contextd.errors import ConflictError, InvalidInputError, NotFoundError
from contextd.ids import new_id
from contextd.models import Group, Project
from contextd.storage import groups as rows
from contextd.storage import projects as project_rows
from contextd.storage.store import Database

__all__ = ["GroupDeletion", "GroupDetail", "GroupService", "group_view"]


class GroupDetail(Struct, frozen=True):
    """A group with its member projects."""

    group: Group
    members: tuple[Project, ...]


class GroupDeletion(Struct, frozen=True):
    """A group deleted: what it was, and how many records went with it."""

    detail: GroupDetail
    records_deleted: int


class GroupService:
    """Create groups, add and remove members, and say which group a record goes into."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def create(self, name: str) -> Group:
        """A new, empty group.

        Raises:
            ValidationError: the name is empty, too long, several lines or holds a secret.
            ConflictError: a project or a group already has this name's slug.
        """
        from contextd.core.workspace.projects import display_name, slugify

        display = display_name(name)
        slug = slugify(display)
        stamp = now()
        with self._db.transaction() as conn:
            if project_rows.slug_taken(conn, slug):
                raise ConflictError(
                    f"A project or group named '{slug}' exists already; choose another name "
                    "(`contextd group list` lists the groups)."
                )
            group = Group(new_id(), slug, display, (), stamp, stamp)
            rows.insert_group(conn, group)
        return group

    def rename(self, name: str, new_name: str) -> Group:
        """Give the group `name` a new name, and the slug that name makes.

        Raises:
            NotFoundError: no such group.
            ValidationError: the new name is empty, too long, several lines or holds a secret.
            ConflictError: another project or group has the new name's slug.
        """
        from contextd.core.workspace.projects import display_name, slugify

        group = self.get(name)
        display = display_name(new_name)
        slug = slugify(display)
        with self._db.transaction() as conn:
            if slug != group.slug and project_rows.slug_taken(conn, slug):
                raise ConflictError(
                    f"A project or group named '{slug}' exists already; choose another name."
                )
            rows.rename_group(conn, group.id, slug, display, now())
        return self.get(group.id)

    def delete(self, name: str, *, purge: bool) -> GroupDeletion:
        """Delete the group `name` on this machine; its members are then in no group. One
        that holds records is deleted only with `purge`, which deletes them with it.

        Raises:
            NotFoundError: no such group.
            InvalidInputError: the group holds records and `purge` is not set.
        """
        detail = self.show(name)
        group = detail.group
        with self._db.transaction() as conn:
            held = rows.held_records(conn, group.id)
            if held and not purge:
                raise InvalidInputError(
                    f"Group {group.slug} holds {held} record{'s' if held != 1 else ''}; "
                    f"`contextd group delete {group.slug} --purge` deletes them with it on this "
                    "machine."
                )
            deleted = project_rows.delete_project(conn, group.id)
        return GroupDeletion(detail, deleted)

    def list_groups(self) -> list[GroupDetail]:
        conn = self._db.connection()
        return [self._detail(group) for group in rows.list_groups(conn)]

    def show(self, name: str) -> GroupDetail:
        """The group named `name` with its members.

        Raises:
            NotFoundError: no group has that id, slug or name.
        """
        return self._detail(self.get(name))

    def get(self, name: str) -> Group:
        found = rows.find_group(self._db.connection(), name)
        if found is None:
            known = ", ".join(g.slug for g in rows.list_groups(self._db.connection()))
            raise NotFoundError(
                f"No group named '{name}' (known: {known or 'none yet'}); "
                "`contextd group create NAME` makes one."
            )
        return found

    def record_count(self, group: Group) -> int:
        """Active records the group holds."""
        return rows.active_records(self._db.connection(), group.id)

    def of(self, project: Project) -> Group | None:
        """The group `project` belongs to, if any."""
        conn = self._db.connection()
        group_id = rows.group_of(conn, project.id)
        return rows.find_group(conn, group_id) if group_id else None

    def add(self, name: str, projects: Sequence[Project]) -> Group:
        """Make each project a member of the group, all or none.

        Raises:
            NotFoundError: no such group.
            ConflictError: a project is in this group already, or in another one.
        """
        group = self.get(name)
        stamp = now()
        with self._db.transaction() as conn:
            for project in projects:
                current = rows.group_of(conn, project.id)
                if current == group.id:
                    raise ConflictError(
                        f"{project.slug} is in group {group.slug} already; nothing to add."
                    )
                if current is not None:
                    other = rows.find_group(conn, current)
                    raise ConflictError(
                        f"{project.slug} belongs to group {other.slug if other else current}; a "
                        f"project is in one group at most: `contextd group remove "
                        f"{other.slug if other else current} {project.slug}` first."
                    )
                rows.add_member(conn, group.id, project.id, stamp)
        return self.get(group.id)

    def remove(self, name: str, projects: Sequence[Project]) -> Group:
        """Take each project out of the group, all or none; the group's records stay.

        Raises:
            NotFoundError: no such group.
            InvalidInputError: a project is not a member of it.
        """
        group = self.get(name)
        stamp = now()
        with self._db.transaction() as conn:
            for project in projects:
                if rows.group_of(conn, project.id) != group.id:
                    raise InvalidInputError(
                        f"{project.slug} is not a member of group {group.slug}; "
                        f"`contextd group show {group.slug}` lists its members."
                    )
                rows.remove_member(conn, group.id, project.id, stamp)
        return self.get(group.id)

    def target(self, name: str, project: Project | None) -> Group:
        """The group a record of `project` is written into: `name` ("" for the project's
        own group). The one confinement rule of group writes, for every way in.

        Raises:
            InvalidInputError: no project, or the project is in no group.
            NotFoundError: no group has that name.
            ConflictError: the project is not a member of that group.
        """
        if project is None:
            raise InvalidInputError(
                "A group record is written from one of the group's projects; name the project.",
                actions=("name_project",),
            )
        if not name:
            found = self.of(project)
            if found is None:
                raise InvalidInputError(
                    f"{project.slug} belongs to no group; `contextd group add GROUP "
                    f"{project.slug}` makes it a member first."
                )
            return found
        group = self.get(name)
        if project.id not in group.members:
            raise ConflictError(
                f"{project.slug} is not a member of group {group.slug}, so it cannot write "
                f"there; `contextd group add {group.slug} {project.slug}` makes it one."
            )
        return group

    def _detail(self, group: Group) -> GroupDetail:
        conn = self._db.connection()
        members = tuple(
            found for pid in group.members if (found := project_rows.get_project(conn, pid))
        )
        return GroupDetail(group, members)


def group_view(detail: GroupDetail) -> dict[str, object]:
    """A group and its members, as --json prints it."""
    group = detail.group
    return {
        "id": group.id,
        "slug": group.slug,
        "name": group.name,
        "members": [{"id": p.id, "slug": p.slug, "name": p.name} for p in detail.members],
        "created_at": group.created_at,
        "updated_at": group.updated_at,
    }
