"""The environment the daemon is started with."""

import pytest

from contextd import threads


@pytest.mark.parametrize("user_chose_blas", [False, True])
def test_the_daemon_gets_two_malloc_arenas_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch, user_chose_blas: bool
) -> None:
    monkeypatch.setattr(threads, "_user_chose", user_chose_blas)
    plain = threads.daemon_environment({"PATH": "/bin"})
    assert plain["MALLOC_ARENA_MAX"] == "2"
    assert plain["PATH"] == "/bin"
    assert ("OPENBLAS_NUM_THREADS" in plain) is not user_chose_blas
    chosen = threads.daemon_environment({"MALLOC_ARENA_MAX": "8"})
    assert chosen["MALLOC_ARENA_MAX"] == "8"
