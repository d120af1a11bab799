"""What a hook process loads: it runs on every prompt. (That contextd.client is the standard
library only is a contract lint-imports checks, in pyproject.toml.)"""

import json
import subprocess
import sys
from pathlib import Path

from tests.hooks._support import hook_env, user_prompt
from tests.hooks.conftest import Seeded

HEAVY = {
    "click",
    "numpy",
    "mcp",
    "httpx",
    "tokenizers",
    "onnxruntime",
    "pathspec",
    "sqlite3",
    "_sqlite3",
    "tomllib",
    "contextd.app",
    "contextd.config",
    "contextd.cli",
    "contextd.hooks.handlers",
    "contextd.hooks.inprocess",
    "contextd.storage",
}


def test_python_m_contextd_hook_never_imports_the_cli(tmp_path: Path) -> None:
    # Garbage stdin and no daemon: the in-process path refuses it on parsing, before the store,
    # so what was imported is the dispatch in contextd.__main__, the entry and json.
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "contextd", "hook", "prompt"],
        input=b"not json",
        capture_output=True,
        cwd=tmp_path,
        env=hook_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == b""
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "contextd.client.hook" in imported
    heavy = HEAVY - {"contextd.hooks.inprocess"}
    assert not imported & heavy, imported & heavy


# What a prompt answered without a daemon never needs: the write path, the vector stack, the
# session-start helpers and process spawning (each costs the agent time on every prompt).
NOT_FOR_RECALL = {
    "contextd.core.writing.writer",
    "contextd.core.writing.duplicates",
    "contextd.core.writing.validation",
    "contextd.credentials.scan",
    "contextd.core.recall.briefing",
    "contextd.core.upkeep.quality",
    "contextd.embeddings.base",
    "contextd.embeddings.hashing",
    "contextd.embeddings.local",
    "contextd.retrieval.indexer",
    "contextd.retrieval.semantic",
    "contextd.retrieval.vector_index",
    "contextd.storage.vectors",
    # (contextd.storage.feedback is read by every search: an answer learned for a prompt's
    # very words comes first; it is two queries over the standard library.)
    "contextd.wire.launch",
    "contextd.gitinfo",
    "numpy",
    "subprocess",
    "logging",
}


def test_a_prompt_answered_without_a_daemon_loads_only_full_text_recall(seeded: Seeded) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "contextd", "hook", "prompt"],
        input=json.dumps(
            user_prompt(seeded.repo, "Why did we pick NATS for the task queue after the deploy?")
        ).encode(),
        capture_output=True,
        cwd=seeded.repo,
        env=hook_env(),
        timeout=60,
        check=True,
    )
    assert b"working-memory" in done.stdout, done.stderr
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert {"contextd.hooks.inprocess", "contextd.retrieval.search"} <= imported
    assert not imported & NOT_FOR_RECALL, sorted(imported & NOT_FOR_RECALL)
