"""Which package index the model comes from, read as pip reads its configuration (without
pip), and a simple-API page in either of its forms, served on loopback."""

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from contextd.embeddings.deadline import Deadline
from contextd.embeddings.package_index import DEFAULT_INDEX, choose_index, shown_url
from contextd.embeddings.simple_api import IndexUnreachable, find_file_url


@pytest.fixture
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No index configured anywhere but in files the test writes."""
    for name in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_CERT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "etc"))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "none.conf"))
    return tmp_path


def _conf(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_with_nothing_configured_the_public_index_is_used(clean: Path) -> None:
    if Path("/etc/pip.conf").is_file() and "index-url" in Path("/etc/pip.conf").read_text("utf-8"):
        pytest.skip("this machine's /etc/pip.conf names an index")
    assert choose_index().url == DEFAULT_INDEX
    assert choose_index().origin == "default"


def test_the_users_pip_conf_is_read_and_install_beats_global(clean: Path) -> None:
    conf = clean / "config" / "pip" / "pip.conf"
    _conf(conf, "[global]\nindex-url = https://a.example/simple\ncert = /ca.pem\n")
    assert choose_index().url == "https://a.example/simple"
    assert choose_index().origin == str(conf)
    assert choose_index().cert == "/ca.pem"
    _conf(
        conf,
        "[global]\nindex-url = https://a.example/simple\n[install]\nindex_url = https://b.example/simple\n",
    )
    assert choose_index().url == "https://b.example/simple"


def test_pip_config_file_overrides_the_users_and_the_environment_beats_both(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _conf(clean / "config" / "pip" / "pip.conf", "[global]\nindex-url = https://a.example/simple\n")
    _conf(clean / "none.conf", "[global]\nindex-url = https://c.example/simple\n")
    assert choose_index().url == "https://c.example/simple"
    monkeypatch.setenv("UV_DEFAULT_INDEX", "https://uv.example/simple")
    assert choose_index().url == "https://uv.example/simple"
    monkeypatch.setenv("PIP_INDEX_URL", "https://pip.example/simple")
    assert (choose_index().url, choose_index().origin) == (
        "https://pip.example/simple",
        "PIP_INDEX_URL",
    )
    assert choose_index("https://given.example/simple").url == "https://given.example/simple"


def test_pip_config_file_set_to_devnull_reads_no_file(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _conf(clean / "config" / "pip" / "pip.conf", "[global]\nindex-url = https://a.example/simple\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    assert choose_index().url == DEFAULT_INDEX


def test_a_broken_pip_conf_is_passed_over(clean: Path) -> None:
    _conf(clean / "config" / "pip" / "pip.conf", "index-url = no section\n")
    assert choose_index().url == DEFAULT_INDEX


def test_credentials_in_an_index_url_are_never_shown() -> None:
    assert (
        shown_url("https://user:token@mirror.example/simple?x=1") == "https://mirror.example/simple"
    )


class _Pages(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/simple/demo/":
            body = json.dumps(
                {"files": [{"filename": "demo-1.whl", "url": "/files/x/demo-1.whl#sha256=ab"}]}
            ).encode()
            kind = "application/vnd.pypi.simple.v1+json"
        elif self.path == "/broken/demo/":
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        else:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def pages() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_json_page_gives_the_files_url_relative_to_the_page(pages: str) -> None:
    url = find_file_url(f"{pages}/simple", "demo", "demo-1.whl", httpx.Client(), Deadline(30))
    assert url == f"{pages}/files/x/demo-1.whl"
    assert (
        find_file_url(f"{pages}/simple", "demo", "demo-2.whl", httpx.Client(), Deadline(30)) is None
    )


def test_an_unknown_project_is_none_and_a_server_error_is_unreachable(pages: str) -> None:
    assert (
        find_file_url(f"{pages}/simple", "other", "demo-1.whl", httpx.Client(), Deadline(30))
        is None
    )
    with pytest.raises(IndexUnreachable, match="HTTP 503"):
        find_file_url(f"{pages}/broken", "demo", "demo-1.whl", httpx.Client(), Deadline(30))


def test_an_index_that_is_not_http_is_refused() -> None:
    with pytest.raises(IndexUnreachable, match="file index URL, not http"):
        find_file_url("file:///opt/pypi/simple", "demo", "demo-1.whl", httpx.Client(), Deadline(30))
