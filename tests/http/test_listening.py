"""Where `contextd serve` listens: HTTPS with the certificate it is given; beyond loopback
without TLS it says that tokens would cross the network readable; TLS files that cannot be
used, or one without the other, are refused in a sentence; it loads the model's fast runtime
before the first request."""

import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.conftest import maps_library
from tests.http.served import new_token, serve
from tests.http.test_access import ACCEPT, INIT


def _certificate(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl here to make a certificate with")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_serve_speaks_https_with_the_certificate_it_is_given(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    cert, key = _certificate(tmp_path)
    token = new_token(home, "alice")
    with serve(repo, "--tls-cert", str(cert), "--tls-key", str(key)) as served:
        assert served.url.startswith("https://127.0.0.1:")
        trusted = ssl.create_default_context(cafile=str(cert))
        headers = {**ACCEPT, "authorization": f"Bearer {token}"}
        answer = httpx.post(served.url, json=INIT, headers=headers, verify=trusted, timeout=30)
        assert answer.status_code == 200
        refused = httpx.post(served.url, json=INIT, headers=ACCEPT, verify=trusted, timeout=30)
        assert refused.status_code == 401
        assert "https://127.0.0.1" in refused.headers["www-authenticate"]


def test_beyond_loopback_without_tls_serve_says_to_put_tls_in_front(home: Path, repo: Path) -> None:
    with serve(repo, "--host", "0.0.0.0") as served:
        assert served.url.startswith("http://0.0.0.0:")
    assert "TLS in front" in served.log


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--tls-cert", "cert.pem"], "both --tls-cert and --tls-key"),
        (["--tls-cert", "missing.pem", "--tls-key", "missing.key"], "TLS certificate or key"),
        (["--host", "no-such-host.invalid"], "not an address"),
    ],
)
def test_serve_refuses_what_it_cannot_listen_with(
    home: Path, repo: Path, extra: list[str], words: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "serve", "--port", "0", *extra],
        cwd=repo,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.usefixtures("local_model")
def test_serve_loads_the_models_fast_runtime_before_any_request(repo: Path) -> None:
    """A server answers many calls: left to the first one, the model would stay on the
    runtime chosen for a one-shot command (numpy), 2.5x slower per query."""
    with serve(repo) as served:
        assert maps_library(served.process.pid, "libonnxruntime"), served.url
