"""Capture quality on scripted sessions: what share of the decisions each session holds end
up recorded (by the agent, when the Stop hook asks) or proposed (by the extractor), and how
many proposals are noise.

Run: .venv/bin/python benchmarks/capture_quality.py [--only NAME]

Each session in benchmarks/data/capture-sessions/ is a transcript (turns, written here in
Claude Code's JSON Lines), the commits it makes, the decisions it holds (each marked by the
phrases a record must contain to count as capturing it), what the agent records when the Stop
hook asks, and what a good model proposes from its transcript. Every session runs in a fresh
home and git repository through the real hooks (fresh processes), twice: without an
extractor, and with one pointed at a stand-in chat endpoint on loopback that answers as the
scripted model would, given what it was actually sent (a proposal whose evidence is not in
the text it received is not made: the cap and the secret scan cost what they cost).

A decision is *recorded* when a stored record (not a checkpoint) holds its phrases, and
*proposed* when a draft waiting for review does. A proposal is *noise* when it holds no marked
decision's phrases, *redundant* when the agent already recorded what it holds.

Caveat: the stand-in plays the model; the numbers measure what the machinery (the hooks, the
bounded read, the secret scan, the write rules, the queue) lets through of a good model's
answer, not a real model's judgement.
"""

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hooks.chat_stand_in import ChatStandIn, chat_stand_in, completion  # noqa: E402

from contextd.app import open_app  # noqa: E402
from contextd.config import load_settings  # noqa: E402
from contextd.models import Kind, Origin, RecordDraft, body_from_dict  # noqa: E402

DATA = Path(__file__).parent / "data" / "capture-sessions"
_IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.com"]
_WAIT_S = 90.0


def sessions(only: str | None) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(DATA.glob("*.json"))]
    return [s for s in found if only is None or s["name"] == only]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *_IDENTITY, *args], check=True, capture_output=True)


def transcript_lines(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The session's turns as Claude Code writes them, one entry a line."""
    lines: list[dict[str, Any]] = []

    def message(role: str, content: object) -> None:
        lines.append({"type": role, "message": {"role": role, "content": content}})

    for n, turn in enumerate(session["turns"]):
        if "user" in turn:
            message("user", turn["user"])
        elif "assistant" in turn:
            message("assistant", [{"type": "text", "text": turn["assistant"]}])
        elif "tool" in turn:
            use = f"toolu_{n:04d}"
            message(
                "assistant",
                [{"type": "tool_use", "id": use, "name": turn["tool"], "input": turn["input"]}],
            )
            message(
                "user", [{"type": "tool_result", "tool_use_id": use, "content": turn["result"]}]
            )
        elif "filler" in turn:
            for k in range(turn["filler"]):
                message("assistant", [{"type": "text", "text": f"({k}) {turn['text']}"}])
    return lines


def append(path: Path, entries: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry) + "\n")
    path.chmod(0o600)


def hook(event: str, repo: Path, env: dict[str, str], **fields: object) -> dict[str, Any] | None:
    payload = {
        "session_id": "bench-session",
        "cwd": str(repo),
        "hook_event_name": {"session-start": "SessionStart", "stop": "Stop"}.get(
            event, "SessionEnd"
        ),
    } | fields
    done = subprocess.run(
        [sys.executable, "-m", "contextd", "hook", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=repo,
        env=env,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout) if done.stdout.strip() else None


def draft_of(spec: dict[str, Any]) -> RecordDraft:
    kind = Kind(spec["kind"])
    body = {k: v for k, v in spec.items() if k not in ("kind", "title", "tags", "category")}
    return RecordDraft(
        kind,
        spec["title"],
        body_from_dict(kind, body),
        category=spec.get("category"),
        tags=tuple(spec.get("tags", ())),
        origin=Origin.AGENT,
        asked_by="agent",
    )


def model_answer(session: dict[str, Any]) -> Any:
    """What the scripted model answers: its records whose evidence is in what it was sent
    (nothing for a text that is not this session's opening)."""
    opening = session["turns"][0].get("user", "")[:60]

    def answer(request: dict[str, Any]) -> bytes:
        sent = next(m["content"] for m in request["messages"] if m["role"] == "user")
        records = []
        for spec in session["model_records"]:
            evidence = spec.get("evidence")
            if (evidence or opening) in sent or (evidence is None and _any_turn(session, sent)):
                records.append({k: v for k, v in spec.items() if k != "evidence"})
        return completion({"records": records})

    return answer


def _any_turn(session: dict[str, Any], sent: str) -> bool:
    texts = [t.get("assistant") or t.get("user") or "" for t in session["turns"]]
    return any(text[:60] in sent for text in texts if text)


def run_session(
    session: dict[str, Any], root: Path, stand_in: ChatStandIn | None
) -> dict[str, Any]:
    home, repo = root / "home", root / "repo"
    home.mkdir(mode=0o700)
    repo.mkdir()
    env = dict(os.environ, CONTEXTD_HOME=str(home), GIT_CONFIG_GLOBAL=str(root / "gitconfig"))
    os.environ.update(CONTEXTD_HOME=str(home), GIT_CONFIG_GLOBAL=str(root / "gitconfig"))
    git(repo, "init", "-q")
    (repo / "README.md").write_text("# project\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Start")
    config = '[embeddings]\nprovider = "hashing"\n[hooks]\nautostart_daemon = false\n'
    if stand_in is not None:
        config += (
            f'[capture]\nextractor = "openai"\napi_base = "{stand_in.api_base}"\n'
            'model = "stand-in"\ntimeout_s = 10.0\n'
        )
        stand_in.answer = model_answer(session)
    (home / "config.toml").write_text(config, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "contextd", "attach"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    transcript = root / "transcript.jsonl"
    transcript.write_text("", encoding="utf-8")
    transcript.chmod(0o600)
    where = {"transcript_path": str(transcript)}

    hook("session-start", repo, env, source="startup", **where)
    for commit in session["commits"]:
        for name, text in commit["files"].items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text, encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", commit["subject"])
    append(transcript, transcript_lines(session))
    if stand_in is not None:
        stand_in.hold()  # the agent answers the Stop hook before the model answers
    asked = hook("stop", repo, env, stop_hook_active=False, **where)
    if asked is not None and asked.get("decision") == "block":
        with open_app(load_settings(cwd=repo)) as app:
            project = app.current_project()
            for spec in session["agent_records"]:
                app.writer.record(draft_of(spec), project)
        calls = [
            {"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"rec{n}", "name": f"mcp__contextd__record_{s['kind']}",
                 "input": {"title": s["title"]}}]}}
            for n, s in enumerate(session["agent_records"])
        ]  # fmt: skip
        append(transcript, calls)
        hook("stop", repo, env, stop_hook_active=True, **where)
    if stand_in is not None:
        stand_in.release()
    hook("session-end", repo, env, reason="prompt_input_exit", **where)
    outcomes = _wait_for_readings(home, transcript.stat().st_size) if stand_in else []
    return _judge(session, home, asked is not None) | {"readings": outcomes}


def _wait_for_readings(home: Path, size: int) -> list[str]:
    """Until the readings took in the whole transcript; how each went (extract.log's lines)."""
    deadline = time.monotonic() + _WAIT_S
    while time.monotonic() < deadline:
        with closing(sqlite3.connect(home / "contextd.db")) as db:
            row = db.execute("SELECT extracted_bytes FROM capture_sessions").fetchone()
        if row is not None and row[0] == size and not _extracting(home):
            log = home / "extract.log"
            lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
            return [line.split(": ", 1)[1] for line in lines if ": " in line]
        time.sleep(0.05)
    raise SystemExit(f"the extraction did not finish within {_WAIT_S:.0f} s")


def _extracting(home: Path) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"capture-extract" in argv and os.fsencode(home) in argv:
                return True
    return False


def _holds(text: str, decision: dict[str, Any]) -> bool:
    folded = text.casefold()
    return all(
        any(option.casefold() in folded for option in phrase.split("|"))
        for phrase in decision["match"]
    )


def _judge(session: dict[str, Any], home: Path, asked: bool) -> dict[str, Any]:
    with closing(sqlite3.connect(home / "contextd.db")) as db:
        stored = db.execute(
            "SELECT kind, title || ' ' || body FROM records WHERE status = 'active'"
        ).fetchall()
        queued = [str(r[0]) for r in db.execute("SELECT draft FROM review_queue").fetchall()]
    records = [str(text) for kind, text in stored if kind != "checkpoint"]
    checkpoints = sum(1 for kind, _ in stored if kind == "checkpoint")
    marked = session["decisions"]
    recorded = {d["id"] for d in marked if any(_holds(r, d) for r in records)}
    proposed = {d["id"] for d in marked if any(_holds(q, d) for q in queued)}
    noise = [q for q in queued if not any(_holds(q, d) for d in marked)]
    redundant = [q for q in queued if any(_holds(q, d) and d["id"] in recorded for d in marked)]
    return {
        "name": session["name"],
        "marked": len(marked),
        "recorded": len(recorded),
        "captured": len(recorded | proposed),
        "proposals": len(queued),
        "noise": len(noise),
        "redundant": len(redundant),
        "asked": asked,
        "checkpoint": checkpoints > 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="one session, by name")
    args = parser.parse_args()
    chosen = sessions(args.only)
    results: dict[str, list[dict[str, Any]]] = {"without": [], "with": []}
    with chat_stand_in() as stand_in:
        for session in chosen:
            for mode in ("without", "with"):
                with tempfile.TemporaryDirectory() as scratch:
                    used = stand_in if mode == "with" else None
                    results[mode].append(run_session(session, Path(scratch), used))
    print(f"{'session':18} {'marked':>6} {'agent':>6} {'+proposals':>10} {'proposals':>9} "
          f"{'noise':>5} {'redundant':>9}  readings")  # fmt: skip
    for plain, extracted in zip(results["without"], results["with"], strict=True):
        print(
            f"{plain['name']:18} {plain['marked']:>6} {plain['recorded']:>6} "
            f"{extracted['captured']:>10} {extracted['proposals']:>9} {extracted['noise']:>5} "
            f"{extracted['redundant']:>9}  {_short(extracted['readings'])}"
        )
    for mode, label in (("without", "without an extractor"), ("with", "with the extractor")):
        rows = results[mode]
        marked = sum(r["marked"] for r in rows)
        captured = sum(r["captured"] for r in rows)
        proposals = sum(r["proposals"] for r in rows)
        noise = sum(r["noise"] for r in rows)
        asked = sum(r["asked"] for r in rows)
        drafted = sum(r["checkpoint"] for r in rows)
        line = (
            f"{label:22}: {captured}/{marked} marked decisions captured ({captured / marked:.0%})"
        )
        if mode == "with":
            line += f"; {proposals} proposals, {noise} noise ({noise / max(proposals, 1):.0%})"
        print(line + f"; Stop asked {asked}/{len(rows)}, checkpoint drafted {drafted}/{len(rows)}")


def _short(readings: list[str]) -> str:
    """The readings that did something (the last one usually finds nothing new)."""
    shown = list(dict.fromkeys(r for r in readings if r != "nothing new to read"))
    shown = shown or readings[-1:]
    return re.sub(r"\s+", " ", "; ".join(shown))[:90]


if __name__ == "__main__":
    main()
