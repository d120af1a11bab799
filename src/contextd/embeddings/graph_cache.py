"""Built ONNX graphs kept in the home (`<home>/models/`), each checked against the weights it
was built for.

Beside each graph, a small JSON manifest names the builder version, the SHA-256 of the weights
and of the graph, and the weights files (path, size, modification time) already verified
against that hash. A graph is used when its own hash matches and the weights file is one of
those; a weights file not seen before is hashed once (~60 ms) and, when it matches, added.
Anything else (another builder, other weights, a damaged or missing file) builds the graph
again. Files are written 0600 through a scratch file renamed over the old one, so a reader
never sees half a graph; a home that cannot be written only costs the cache.
"""

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from contextd.embeddings.weights import file_sha256

__all__ = ["is_current", "load_graph"]

log = logging.getLogger(__name__)

_SEEN = 8  # weights files remembered per graph (several virtualenvs may share one home)


class _Manifest(msgspec.Struct, frozen=True):
    builder: int
    precision: str
    weights_sha256: str
    graph_sha256: str
    seen: list[tuple[str, int, int]]  # (path, size, mtime_ns) of weights with that hash


def load_graph(
    cache: Path | None,
    name: str,
    weights: Path,
    builder: int,
    precision: str,
    build: Callable[[], bytes],
) -> bytes:
    """The graph `name` from the cache when it was built by `builder` over these weights, else
    `build()` (then stored, when `cache` is a folder that can be written)."""
    stamp = _stamp(weights)
    if cache is not None:
        found = _cached(cache, name, weights, builder, precision)
        if found is not None:
            graph, manifest = found
            if stamp not in manifest.seen:
                seen = [stamp, *manifest.seen][:_SEEN]
                _store(cache, f"{name}.json", _encode(manifest, seen=seen))
            return graph
    graph = build()
    if cache is not None:
        manifest = _Manifest(builder, precision, file_sha256(weights), _sha256(graph), [stamp])
        # The graph first: a reader pairing the new manifest with the old graph (or the other
        # way round) sees a hash that does not match and builds for itself.
        if _store(cache, f"{name}.onnx", graph):
            _store(cache, f"{name}.json", msgspec.json.encode(manifest))
    return graph


def is_current(cache: Path, name: str, weights: Path, builder: int, precision: str) -> bool:
    """Whether `load_graph` would find the graph `name` in `cache` for these weights (no
    build, nothing written)."""
    return _cached(cache, name, weights, builder, precision) is not None


def _cached(
    cache: Path, name: str, weights: Path, builder: int, precision: str
) -> tuple[bytes, _Manifest] | None:
    """The cached graph and its manifest, when built by `builder` over these weights."""
    manifest = _read_manifest(cache / f"{name}.json")
    if manifest is None or (manifest.builder, manifest.precision) != (builder, precision):
        return None
    graph = _read(cache / f"{name}.onnx")
    if graph is None or _sha256(graph) != manifest.graph_sha256:
        return None
    if _stamp(weights) in manifest.seen or file_sha256(weights) == manifest.weights_sha256:
        return graph, manifest
    return None


def _stamp(path: Path) -> tuple[str, int, int]:
    found = path.stat()
    return (str(path.resolve()), found.st_size, found.st_mtime_ns)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _read_manifest(path: Path) -> _Manifest | None:
    data = _read(path)
    if data is None:
        return None
    try:
        return msgspec.json.decode(data, type=_Manifest)
    except msgspec.DecodeError:
        return None  # damaged or foreign: rebuilt


def _encode(manifest: _Manifest, *, seen: list[tuple[str, int, int]]) -> bytes:
    return msgspec.json.encode(msgspec.structs.replace(manifest, seen=seen))


def _store(folder: Path, name: str, data: bytes) -> bool:
    """Replace folder/name with `data` in one step (0600); False when it cannot be written."""
    scratch: str | None = None
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(prefix=f".{name}.", dir=folder)  # mode 0600
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, folder / name)
        scratch = None
        return True
    except OSError as exc:
        log.debug("cannot cache %s in %s: %s", name, folder, exc)
        return False
    finally:
        if scratch is not None:
            Path(scratch).unlink(missing_ok=True)
