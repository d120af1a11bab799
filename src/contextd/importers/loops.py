"""Supersede links an import would leave looping (A replaced by B, B by A): such records
replace each other and none is current, so the import is refused, as a bundle is."""

from collections.abc import Callable, Mapping

__all__ = ["supersede_loops"]

_MAX_CHAIN = 10_000  # longer than any chain an import can hold


def supersede_loops(
    links: Mapping[str, str], stored_successor: Callable[[str], str | None]
) -> list[list[str]]:
    """Each loop, as its record ids in link order (each loop once), through the links the
    import sets (`links`: record id -> its successor) and those stored records already have
    (`stored_successor`)."""

    def successor(record_id: str) -> str | None:
        return links[record_id] if record_id in links else stored_successor(record_id)

    loops: list[list[str]] = []
    placed: set[str] = set()  # on a path already followed
    for start in links:
        path: list[str] = []
        current: str | None = start
        while current is not None and current not in placed and len(path) < _MAX_CHAIN:
            placed.add(current)
            path.append(current)
            current = successor(current)
        if current is not None and current in path:
            loops.append(path[path.index(current) :])
    return loops
