"""The one answer to each hot request (a search, a recall, a write, a hook), over the core
services of an App. The daemon gives it to its clients; a command with no daemon gives it in
its own process; both print it with the same code (contextd.client.results), so what a person
sees is the same either way.

A refusal is the core's ContextdError, raised: the daemon sends its facts to the client, the
command in process lets the CLI word it, in the same words.
"""

from pathlib import Path
from typing import Any

import msgspec

from contextd.app import App
from contextd.core.reading.views import written_view
from contextd.core.recall.answers import recall_answer, search_answer
from contextd.errors import InvalidInputError
from contextd.hooks.handlers import handle
from contextd.hooks.reply import agent_reply, parse_payload
from contextd.models import Project
from contextd.service.requests import HookAsk, RecallAsk, SearchAsk, WriteAsk
from contextd.wire.hook_events import EVENTS

__all__ = ["Asked", "answer", "answer_here"]

Asked = HookAsk | SearchAsk | RecallAsk | WriteAsk


def answer(app: App, request: Asked, body: bytes = b"") -> tuple[dict[str, Any], bytes]:
    """The reply's head (plain data) and, for a hook, the bytes the hook prints.

    Raises:
        ContextdError: the core refused the request (a rule a write breaks, no project here).
        ValueError: a hook's payload is not a JSON object, or names no known event.
    """
    if isinstance(request, HookAsk):
        return {}, _hook(app, request, body)
    if isinstance(request, WriteAsk):
        draft = request.draft
        project = None if draft.is_global else _project(app, request.project, request.folder)
        stored = app.writer.record(
            draft, project, force=request.force, supersedes=request.supersedes
        )
        return {
            "written": {
                "view": written_view(
                    stored.record, stored.similar, held=stored.held, group=stored.group
                ),
                "shorts": stored.shorts,
            }
        }, b""
    project = _project(app, request.project, request.folder)
    if isinstance(request, SearchAsk):
        found = search_answer(
            app.search, app.reader.handles, project, request.query, request.explain
        )
        return {"answer": msgspec.to_builtins(found)}, b""
    packed = recall_answer(
        app.search, app.reader.handles, project, request.query, request.budget, request.explain
    )
    return {"answer": msgspec.to_builtins(packed)}, b""


def answer_here(app: App, request: dict[str, object]) -> dict[str, Any]:
    """`answer` for a request a command built in this process (contextd.client.commands).

    Raises:
        ContextdError: as `answer`; a request of the wrong shape is InvalidInputError.
    """
    try:
        typed = msgspec.convert(request, Asked)
    except msgspec.ValidationError as exc:
        raise InvalidInputError(f"The command's values cannot be used: {exc}.") from None
    return answer(app, typed)[0]


def _project(app: App, name: str | None, folder: str) -> Project:
    """The project asked for, its checkout's view of its team files brought up to date."""
    project = app.project(name, Path(folder))
    app.shares.take_in(project, app.vectors_wanted)
    return project


def _hook(app: App, request: HookAsk, body: bytes) -> bytes:
    if request.event not in EVENTS:
        raise ValueError(f"no hook event {request.event!r}")
    payload = parse_payload(body)
    text = handle(
        app, request.event, payload, request.project, Path(request.folder), request.project_dirs
    )
    return agent_reply(request.event, text, payload).encode("ascii")
