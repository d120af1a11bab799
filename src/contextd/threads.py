"""How many threads BLAS (numpy's products) may use: chosen once, by the entry point, before
numpy loads; the standard library only.

One-shot commands take one thread unless the user set OPENBLAS_NUM_THREADS: contextd's
matrices are small, and OpenBLAS's spinning helper threads made a query and a duplicate check
3-4x slower on a busy 2-core machine. The daemon, started by a launcher, takes two (it has the
machine to itself between prompts)."""

import os

__all__ = ["choose_for_one_shot", "daemon_environment", "single_blas_thread"]

_VARIABLE = "OPENBLAS_NUM_THREADS"
_user_chose = False


def choose_for_one_shot() -> None:
    """One BLAS thread for this process, unless the user chose a number."""
    global _user_chose
    _user_chose = _VARIABLE in os.environ
    os.environ.setdefault(_VARIABLE, "1")


def daemon_environment(environ: dict[str, str]) -> dict[str, str]:
    """The environment to start the daemon with: two BLAS threads unless the user chose."""
    if _user_chose:
        return environ
    return environ | {_VARIABLE: str(min(2, os.cpu_count() or 1))}


def single_blas_thread() -> bool:
    """Whether BLAS runs one thread here (then batches may run side by side on two cores)."""
    return os.environ.get(_VARIABLE) == "1"
