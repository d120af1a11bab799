"""A person's overview of a project: git position, what is stored, where work stopped."""

from pathlib import Path

from msgspec import Struct

from contextd import gitinfo
from contextd.core.reading.reader import RecordReader
from contextd.core.upkeep.semantic_index import IndexService, IndexState, Reachability
from contextd.models import Group, Kind, Project, Record

__all__ = ["PROBE_TIMEOUT_S", "StatusReport", "project_status"]

PROBE_TIMEOUT_S = 1.5  # how long status waits on the embedding endpoint, and on Qdrant


class StatusReport(Struct, frozen=True):
    project: Project
    git: gitinfo.GitState | None
    counts: dict[Kind, int]
    last_checkpoint: Record | None
    home: Path
    index: IndexState
    reach: Reachability  # whether the embedding provider and the vector store answered
    waiting_review: int = 0  # drafts agents wrote, held for a person ([capture] review)
    group: Group | None = None  # the project group whose records apply here too


def project_status(
    records: RecordReader,
    index: IndexService,
    project: Project,
    home: Path,
    waiting_review: int = 0,
    group: Group | None = None,
) -> StatusReport:
    """Gather the overview `contextd status` shows."""
    return StatusReport(
        project=project,
        git=_git_state_of(project),
        counts=records.counts(project),
        last_checkpoint=records.latest(project, Kind.CHECKPOINT),
        home=home,
        index=index.state(),
        reach=index.probe(PROBE_TIMEOUT_S),
        waiting_review=waiting_review,
        group=group,
    )


def _git_state_of(project: Project) -> gitinfo.GitState | None:
    """Git position of the project's first folder that still exists on this machine."""
    for path in project.paths:
        folder = Path(path)
        if folder.is_dir():
            return gitinfo.git_state(folder)
    return None
