"""The environment the daemon is started with."""

import pytest

from contextd import threads


@pytest.mark.parametrize("user_chose_blas", [False, True])
def test_the_daemon_gets_two_malloc_arenas_and_blas_threads_that_sleep_unless_chosen(
    monkeypatch: pytest.MonkeyPatch, user_chose_blas: bool
) -> None:
    monkeypatch.setattr(threads, "_user_chose", user_chose_blas)
    plain = threads.daemon_environment({"PATH": "/bin"})
    assert plain["MALLOC_ARENA_MAX"] == "2"
    assert plain["OPENBLAS_THREAD_TIMEOUT"] == "4"
    assert plain["PATH"] == "/bin"
    assert ("OPENBLAS_NUM_THREADS" in plain) is not user_chose_blas
    chosen = threads.daemon_environment({"MALLOC_ARENA_MAX": "8", "OPENBLAS_THREAD_TIMEOUT": "9"})
    assert (chosen["MALLOC_ARENA_MAX"], chosen["OPENBLAS_THREAD_TIMEOUT"]) == ("8", "9")
