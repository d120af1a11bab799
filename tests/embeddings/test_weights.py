"""Rows of a safetensors table read on demand: the same numbers the mapped file holds, never
the whole table in the process's memory, and one clear error for a bad id or a short file."""

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from contextd.embeddings.weights import RowReader, map_float32


def _safetensors(path: Path, tensors: dict[str, np.ndarray]) -> Path:
    header, offset, data = {}, 0, b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        offset, data = offset + len(raw), data + raw
    encoded = json.dumps(header).encode("utf-8")
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + data)
    return path


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    rng = np.random.default_rng(7)
    tensors = {
        "bias": rng.standard_normal(5).astype(np.float32),
        "table": rng.standard_normal((40, 6)).astype(np.float32),
    }
    return _safetensors(tmp_path / "model.safetensors", tensors)


def test_rows_read_on_demand_are_the_mapped_tables_rows(weights: Path) -> None:
    ids = np.array([[3, 0, 39, 3], [7, 7, 1, 0]], dtype=np.int64)
    rows = RowReader(weights, "table").take(np, ids)
    mapped = map_float32(np, weights)["table"]
    assert rows.shape == (2, 4, 6)
    assert rows.dtype == np.float32
    assert np.array_equal(rows, mapped[ids])


def test_an_id_outside_the_table_is_refused(weights: Path) -> None:
    reader = RowReader(weights, "table")
    with pytest.raises(ValueError, match="below 40"):
        reader.take(np, np.array([[1, 40]]))
    with pytest.raises(ValueError, match="below 40"):
        reader.take(np, np.array([[-1]]))


def test_a_file_cut_short_after_opening_is_an_os_error(weights: Path) -> None:
    reader = RowReader(weights, "table")
    weights.write_bytes(weights.read_bytes()[:-100])
    with pytest.raises(OSError, match="ends before the row"):
        reader.take(np, np.array([[39]]))


@pytest.mark.parametrize("name", ["bias", "missing"])
def test_only_a_two_dimensional_float_table_can_be_read(weights: Path, name: str) -> None:
    with pytest.raises(ValueError, match="no float32 table"):
        RowReader(weights, name)


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads Linux's /proc")
def test_a_warmed_model_keeps_the_word_embeddings_out_of_its_memory() -> None:
    """The 47 MB table became resident page by page when mapped (~30 MiB of a daemon after
    200 writes); read row by row, it stays in the page cache, shared by every process."""
    script = (
        "import random, re, string\n"
        "from contextd.embeddings.local import LocalMiniLM\n"
        "model = LocalMiniLM()\n"
        "model.warm()\n"
        "rng = random.Random(7)\n"
        "def word():\n"
        "    return ''.join(rng.choice(string.ascii_lowercase) for _ in range(7))\n"
        "texts = [' '.join(word() for _ in range(12)) for _ in range(200)]\n"
        "model.embed_documents(texts[:100])\n"
        "for text in texts[100:]:\n"
        "    model.embed_query(text)\n"
        "resident, current = 0, ''\n"
        "for line in open('/proc/self/smaps'):\n"
        "    head = re.match(r'^[0-9a-f]+-[0-9a-f]+ \\S+ \\S+ \\S+ \\S+\\s*(.*)$', line)\n"
        "    if head:\n"
        "        current = head.group(1)\n"
        "    elif line.startswith('Rss:') and current.endswith('model.safetensors'):\n"
        "        resident += int(line.split()[1])\n"
        "print(resident)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
        timeout=300,
    )
    assert int(done.stdout) < 2 * 1024  # KiB: the small tensors onnxruntime maps
