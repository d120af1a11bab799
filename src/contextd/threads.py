"""How many threads BLAS (numpy's products) may use: chosen once, by the entry point, before
numpy loads; the standard library only.

One-shot commands take one thread unless the user set OPENBLAS_NUM_THREADS: contextd's
matrices are small, and OpenBLAS's spinning helper threads made a query and a duplicate check
3-4x slower on a busy 2-core machine. The daemon, started by a launcher, takes two (it has the
machine to itself between prompts).

The daemon's BLAS threads sleep as soon as a product is done (OPENBLAS_THREAD_TIMEOUT=4, unless
the user set it), instead of spinning for a while in case another comes: beside onnxruntime's
threads, the spinning cost each warm recall at 10k records ~11 ms of CPU (30 instead of 19).

The daemon also gets two malloc arenas (glibc's MALLOC_ARENA_MAX; ignored elsewhere) unless
the user set that: by default every thread that allocates (the request pool, each hosted MCP
session, the model's runs) gets an arena of its own that keeps what it freed. Measured at 10k
records, after two MCP sessions and a search: 206 instead of 212 MiB."""

import os

__all__ = ["choose_for_one_shot", "daemon_environment", "single_blas_thread"]

_VARIABLE = "OPENBLAS_NUM_THREADS"
_ARENAS = "MALLOC_ARENA_MAX"
_SPIN = "OPENBLAS_THREAD_TIMEOUT"  # 2**N cycles a BLAS thread spins before it sleeps
_user_chose = False


def choose_for_one_shot() -> None:
    """One BLAS thread for this process, unless the user chose a number."""
    global _user_chose
    _user_chose = _VARIABLE in os.environ
    os.environ.setdefault(_VARIABLE, "1")


def daemon_environment(environ: dict[str, str]) -> dict[str, str]:
    """The environment to start the daemon with: two BLAS threads that do not spin, and two
    malloc arenas, unless the user chose."""
    chosen = {_ARENAS: environ.get(_ARENAS, "2"), _SPIN: environ.get(_SPIN, "4")}
    if not _user_chose:
        chosen[_VARIABLE] = str(min(2, os.cpu_count() or 1))
    return environ | chosen


def single_blas_thread() -> bool:
    """Whether BLAS runs one thread here (then batches may run side by side on two cores)."""
    return os.environ.get(_VARIABLE) == "1"
