"""Imported first by the benchmarks that run contextd in their own process: one BLAS thread,
as `contextd` itself chooses for a one-shot command (see contextd.threads)."""

from contextd.threads import choose_for_one_shot

choose_for_one_shot()
