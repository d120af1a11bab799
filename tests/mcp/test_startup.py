"""What the MCP server loads before it can answer `initialize` and `tools/list`: the SDK and
its tools, not the model or the write path (they load in the background or on first use)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LATER = {
    "numpy",
    "onnxruntime",
    "onnx",
    "tokenizers",
    "contextd.embeddings.minilm_onnx",
    "contextd.core.writing.writer",
    "contextd.core.writing.duplicates",
}


@pytest.mark.usefixtures("repo")
def test_building_the_server_loads_neither_the_model_nor_the_write_path(home: Path) -> None:
    (home / "config.toml").write_text('[embeddings]\nprovider = "local"\n', encoding="utf-8")
    script = (
        "import json, sys, anyio\n"
        "from contextd.app import open_app\n"
        "from contextd.config import load_settings\n"
        "from contextd.mcp.server import build_server\n"
        "with open_app(load_settings()) as app:\n"
        "    server = build_server(app)\n"
        "    tools = anyio.run(server.list_tools)\n"
        "print(json.dumps({'tools': len(tools), 'loaded': sorted(sys.modules)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=os.environ.copy(),
        timeout=120,
        check=True,
    )
    answer = json.loads(done.stdout)
    assert answer["tools"] >= 20
    assert LATER.isdisjoint(answer["loaded"]), LATER & set(answer["loaded"])
