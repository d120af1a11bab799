"""The cache of built graphs: reused only for the weights (by hash) and builder they came from."""

import json
import os
from pathlib import Path

import pytest

from contextd.embeddings.graph_cache import load_graph


class Builds:
    """A build function that counts its calls and returns a graph naming its call."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> bytes:
        self.count += 1
        return f"graph #{self.count}".encode()


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    path = tmp_path / "pkg" / "model.safetensors"
    path.parent.mkdir()
    path.write_bytes(b"weights v1" * 100)
    return path


def load(cache: Path | None, weights: Path, build: Builds, builder: int = 1) -> bytes:
    return load_graph(cache, "m.fp32", weights, builder, "fp32", build)


def test_a_graph_is_built_once_then_read_back(tmp_path: Path, weights: Path) -> None:
    build = Builds()
    cache = tmp_path / "models"
    assert load(cache, weights, build) == b"graph #1"
    assert load(cache, weights, build) == b"graph #1"
    assert build.count == 1
    assert cache.stat().st_mode & 0o777 == 0o700
    assert {p.name: p.stat().st_mode & 0o777 for p in cache.iterdir()} == {
        "m.fp32.onnx": 0o600,
        "m.fp32.json": 0o600,
    }


def test_the_same_weights_elsewhere_are_checked_by_hash_and_not_rebuilt(
    tmp_path: Path, weights: Path
) -> None:
    build, cache = Builds(), tmp_path / "models"
    load(cache, weights, build)
    elsewhere = tmp_path / "other-venv" / "model.safetensors"
    elsewhere.parent.mkdir()
    elsewhere.write_bytes(weights.read_bytes())
    assert load(cache, elsewhere, build) == b"graph #1"
    assert load(cache, weights, build) == b"graph #1"
    assert build.count == 1
    seen = json.loads((cache / "m.fp32.json").read_text(encoding="utf-8"))["seen"]
    assert {entry[0] for entry in seen} == {str(weights.resolve()), str(elsewhere.resolve())}


def test_changed_weights_build_the_graph_again(tmp_path: Path, weights: Path) -> None:
    build, cache = Builds(), tmp_path / "models"
    load(cache, weights, build)
    weights.write_bytes(b"weights v2" * 100)
    os.utime(weights, ns=(1, 1))  # a new stamp even on a coarse clock
    assert load(cache, weights, build) == b"graph #2"
    assert load(cache, weights, build) == b"graph #2"
    assert build.count == 2


def test_a_new_builder_version_builds_again(tmp_path: Path, weights: Path) -> None:
    build, cache = Builds(), tmp_path / "models"
    load(cache, weights, build, builder=1)
    assert load(cache, weights, build, builder=2) == b"graph #2"
    assert build.count == 2


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("m.fp32.onnx", b"graph #"),  # cut short
        ("m.fp32.json", b"{not json"),
        ("m.fp32.json", b'{"builder": "one"}'),
    ],
)
def test_a_damaged_cache_file_is_rebuilt(
    tmp_path: Path, weights: Path, name: str, damage: bytes
) -> None:
    build, cache = Builds(), tmp_path / "models"
    load(cache, weights, build)
    (cache / name).write_bytes(damage)
    assert load(cache, weights, build) == b"graph #2"
    assert load(cache, weights, build) == b"graph #2"  # and the repair is kept


def test_a_cache_that_cannot_be_written_only_costs_the_build(tmp_path: Path, weights: Path) -> None:
    build = Builds()
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    assert load(blocked / "models", weights, build) == b"graph #1"
    assert load(blocked / "models", weights, build) == b"graph #2"
    assert load(None, weights, build) == b"graph #3"
