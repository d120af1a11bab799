"""contextd: project memory for AI coding agents."""

import os

# One BLAS thread unless the user says otherwise (read when numpy loads, so set first):
# contextd's matrices are small, and OpenBLAS's spinning helper threads made a query and a
# duplicate check 3-4x slower on a busy 2-core machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from contextd.app import App, open_app  # noqa: E402
from contextd.config import Settings, load_settings  # noqa: E402
from contextd.errors import ContextdError  # noqa: E402

__all__ = ["App", "ContextdError", "Settings", "load_settings", "open_app"]
