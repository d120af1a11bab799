"""`contextd doctor`: a healthy home passes, and each problem it knows is reported with the
command that fixes it and exit 1. Real homes, real agent files, a real daemon, and endpoints on
loopback (one that answers nothing)."""

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextd.embeddings.model_files import INSTALLED_MARK, MODEL_PACKAGE, PINNED, find_model_dir

_HEALTHY = ("ok", "warn", "skip")


@pytest.fixture
def user(tmp_path: Path) -> Path:
    """A HOME of its own, so the agents found are the test's, not this machine's."""
    folder = tmp_path / "user"
    folder.mkdir()
    return folder


def _doctor(home: Path, user: Path, *extra_env: tuple[str, str]) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "CONTEXTD_HOME": str(home), "HOME": str(user), **dict(extra_env)}
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "doctor", "--json"],
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def _check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in report["checks"] if c["check"] == name)


def _config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text + "[hooks]\nautostart_daemon = false\n", "utf-8")


def _initialised(home: Path, user: Path) -> None:
    env = {**os.environ, "CONTEXTD_HOME": str(home), "HOME": str(user)}
    subprocess.run(
        [sys.executable, "-m", "contextd", "init", "--no-model"],
        env=env,
        check=True,
        capture_output=True,
    )


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def home_model(home: Path) -> Path:
    """The model copied into the home as `contextd model install` leaves it."""
    source = find_model_dir()
    assert source is not None, "the tests need the model package (scripts/check installs it)"
    folder = home / "models" / "all-MiniLM-L6-v2"
    folder.mkdir(parents=True)
    for name in PINNED.files:
        shutil.copyfile(source / name, folder / name)
    (folder / INSTALLED_MARK).write_text(json.dumps({"wheel_sha256": PINNED.sha256}), "utf-8")
    return folder


def test_a_healthy_home_passes_and_says_where_the_model_is(
    home: Path, user: Path, home_model: Path
) -> None:
    _config(home, '[embeddings]\nprovider = "local"\n')
    _initialised(home, user)
    code, report = _doctor(home, user)
    assert code == 0 and report["ok"] is True, report
    assert all(c["state"] in _HEALTHY for c in report["checks"]), report
    assert _check(report, "store")["state"] == "ok"
    model = _check(report, "model")
    assert model["state"] == "ok" and f"in the contextd home ({home_model})" in model["detail"]
    assert _check(report, "graph cache") == {
        "check": "graph cache",
        "state": "warn",
        "detail": "onnxruntime's graph is not built yet (the daemon builds it, once, at start)",
        "fix": "contextd daemon start",
    }
    daemon = _check(report, "daemon")
    assert daemon["state"] == "warn" and daemon["fix"] == "contextd daemon start"


def test_a_running_daemon_and_a_built_graph_are_ticked(home: Path, user: Path) -> None:
    _config(home, '[embeddings]\nprovider = "local"\n')
    _initialised(home, user)
    env = {**os.environ, "CONTEXTD_HOME": str(home), "HOME": str(user)}
    start = [sys.executable, "-m", "contextd", "daemon", "start"]
    subprocess.run(start, env=env, check=True, capture_output=True, timeout=120)
    try:
        code, report = _doctor(home, user)
    finally:
        stop = [sys.executable, "-m", "contextd", "daemon", "stop"]
        subprocess.run(stop, env=env, capture_output=True, timeout=60)
    assert code == 0, report
    assert _check(report, "daemon")["state"] == "ok"
    assert _check(report, "graph cache")["state"] == "ok"
    assert "from the installed package" in _check(report, "model")["detail"]


def test_a_home_never_initialised_is_told_to_run_init(home: Path, user: Path) -> None:
    code, report = _doctor(home, user)
    assert code == 1 and report["ok"] is False
    store = _check(report, "store")
    assert store["state"] == "fail" and store["fix"] == "contextd init"
    assert not (home / "contextd.db").exists()  # doctor writes nothing


def test_a_config_that_does_not_parse_is_the_one_problem_reported(home: Path, user: Path) -> None:
    (home / "config.toml").write_text("[embeddings\nprovider = 1\n", "utf-8")
    code, report = _doctor(home, user)
    assert code == 1
    assert [c["check"] for c in report["checks"]] == ["config"]
    assert report["checks"][0]["fix"] == "contextd config --check"


def test_a_missing_model_is_told_to_run_model_install(
    home: Path, user: Path, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow" / MODEL_PACKAGE
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("", "utf-8")
    _config(home, '[embeddings]\nprovider = "local"\n')
    _initialised(home, user)
    code, report = _doctor(home, user, ("PYTHONPATH", str(shadow.parent)))
    assert code == 1
    model = _check(report, "model")
    assert model["state"] == "fail" and model["fix"] == "contextd model install"


def test_damaged_weights_are_told_to_install_again(
    home: Path, user: Path, home_model: Path
) -> None:
    _config(home, '[embeddings]\nprovider = "local"\n')
    _initialised(home, user)
    weights = home_model / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-100] ^= 0xFF
    weights.write_bytes(bytes(data))
    code, report = _doctor(home, user)
    assert code == 1
    model = _check(report, "model")
    assert model["state"] == "fail" and "not the pinned ones" in model["detail"]
    assert model["fix"] == "contextd model install --force"


def test_a_model_that_does_not_load_says_why(home: Path, user: Path, home_model: Path) -> None:
    _config(home, '[embeddings]\nprovider = "local"\n')
    _initialised(home, user)
    (home_model / "config.json").write_text("{not json", "utf-8")
    code, report = _doctor(home, user)
    assert code == 1
    model = _check(report, "model")
    assert model["state"] == "fail" and "cannot be read" in model["detail"]
    assert model["fix"] == "contextd model install --force"


@pytest.fixture
def claude(user: Path) -> Iterator[Path]:
    (user / ".claude").mkdir()
    yield user / ".claude.json"


def test_an_agent_file_that_does_not_parse_is_reported(
    home: Path, user: Path, claude: Path
) -> None:
    _initialised(home, user)
    claude.write_text('{"mcpServers": {', "utf-8")
    code, report = _doctor(home, user)
    assert code == 1
    agent = _check(report, "agent claude")
    assert agent["state"] == "fail" and ".claude.json" in agent["detail"]
    assert "contextd setup --agent claude" in agent["fix"]


def test_an_agent_entry_whose_program_is_gone_is_reported(
    home: Path, user: Path, claude: Path
) -> None:
    _initialised(home, user)
    entry = {"type": "stdio", "command": "/gone/bin/contextd", "args": ["mcp", "serve"]}
    claude.write_text(json.dumps({"mcpServers": {"contextd": entry}}), "utf-8")
    code, report = _doctor(home, user)
    assert code == 1
    agent = _check(report, "agent claude")
    assert agent["state"] == "fail" and "/gone/bin/contextd" in agent["detail"]
    assert agent["fix"] == "contextd setup --agent claude"


def test_an_agent_installed_but_not_wired_is_a_warning(
    home: Path, user: Path, claude: Path
) -> None:
    _initialised(home, user)
    code, report = _doctor(home, user)
    agent = _check(report, "agent claude")
    assert agent["state"] == "warn" and agent["fix"] == "contextd setup --agent claude"


def test_an_embedding_endpoint_and_a_vector_server_nobody_answers_are_reported(
    home: Path, user: Path
) -> None:
    port = _closed_port()
    _config(
        home,
        f'[embeddings]\nprovider = "openai"\napi_base = "http://127.0.0.1:{port}/v1"\n'
        'model = "m"\ndimensions = 16\n'
        f'[vectors]\nbackend = "qdrant"\nurl = "http://127.0.0.1:{port}"\n',
    )
    _initialised(home, user)
    code, report = _doctor(home, user)
    assert code == 1
    assert _check(report, "model")["state"] == "skip"
    embeddings = _check(report, "embeddings")
    assert embeddings["state"] == "fail" and embeddings["fix"] == "check embeddings.api_base"
    vectors = _check(report, "vectors")
    assert vectors["state"] == "fail" and vectors["fix"] == "check [vectors] url or path"


def test_a_team_server_that_does_not_answer_is_reported(home: Path, user: Path) -> None:
    port = _closed_port()
    _config(
        home,
        f'[embeddings]\nprovider = "hashing"\n[store]\nurl = "postgresql://me@127.0.0.1:{port}/db"\n'
        "connect_timeout_s = 2\n",
    )
    code, report = _doctor(home, user)
    assert code == 1
    store = _check(report, "store")
    assert store["state"] == "fail" and store["fix"] == "check [store] url and that the server runs"


def test_records_without_vectors_are_told_to_refresh(home: Path, user: Path) -> None:
    _config(home, '[embeddings]\nprovider = "none"\n')
    _initialised(home, user)
    env = {**os.environ, "CONTEXTD_HOME": str(home), "HOME": str(user)}
    add = [sys.executable, "-m", "contextd", "add", "--global", "--category", "convention"]
    add.append("Deploys go out on Tuesdays after the standup")
    subprocess.run(add, env=env, check=True, capture_output=True, timeout=60)
    _config(home, '[embeddings]\nprovider = "hashing"\n')
    code, report = _doctor(home, user)
    assert code == 0, report
    index = _check(report, "index")
    assert index["state"] == "warn" and index["fix"] == "contextd refresh"


def test_the_human_report_names_each_fix(home: Path, user: Path) -> None:
    env = {**os.environ, "CONTEXTD_HOME": str(home), "HOME": str(user), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "doctor"],
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert done.returncode == 1
    assert "run: contextd init" in done.stdout
    assert "problem found" in done.stdout or "problems found" in done.stdout
