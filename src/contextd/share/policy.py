"""Which records a shared project keeps in its repository: the kinds and memory categories
`[share] records` names. Checkpoints never go there: where one developer's work stopped is
theirs, and a file must not tell another developer's agent what to do next."""

from contextd.models import Kind, Record

__all__ = ["SharePolicy"]


class SharePolicy:
    def __init__(self, shared_records: str) -> None:
        self._shared = frozenset(shared_records.split()) - {str(Kind.CHECKPOINT)}

    def allows(self, record: Record) -> bool:
        """Whether `record` (of a shared project) lives in the repository's files."""
        if record.project_id is None:
            return False
        return self.allows_kind(record.kind, record.category)

    def allows_kind(self, kind: Kind, category: str | None) -> bool:
        if kind is Kind.MEMORY:
            return (category or "") in self._shared
        return str(kind) in self._shared

    def refusal(self, kind: Kind, category: str | None) -> str | None:
        """Why a file holding a record of this kind (and category) is not taken in, or None."""
        if self.allows_kind(kind, category):
            return None
        if kind is Kind.CHECKPOINT:
            return "it is a checkpoint, and checkpoints are never shared (each developer's own)"
        what = f"{category} memories" if kind is Kind.MEMORY else f"{kind}s"
        return (
            f"{what} are not shared here (`[share] records` in config.toml names what is); "
            "remove the file or share them"
        )
