"""The hook's slow path, taken when no daemon answers: open the store here, without the
embedding model (its load alone costs more than a prompt may wait), so recall is full-text.
A session-start also starts the daemon for the prompts that follow, when config allows.

The store is imported only once the payload is known to need it: a slash command or a broken
payload costs json, not the whole app."""

from contextd.hooks.reply import agent_reply, is_command, parse_payload

__all__ = ["answer_in_process"]

# Within the hook's own time budget: a store locked by a long write gives up, not the agent.
_BUSY_TIMEOUT_MS = 1500
# A team server's every wait (connecting, each statement, a lock): with the start-up, a hook
# on a server that accepts the connection and never answers is done within 1 s.
_SERVER_TIMEOUT_MS = 500


def answer_in_process(event: str, raw: bytes) -> str:
    """What the hook prints for `event` given the agent's raw payload."""
    payload = parse_payload(raw)
    prompt = str(payload.get("prompt") or "").strip()
    if event == "prompt" and is_command(prompt):
        return ""  # a slash or bang command: not worth opening the store for
    from msgspec.structs import replace

    from contextd.app import can_write_store, open_app
    from contextd.config import load_settings
    from contextd.hooks.handlers import handle, turned_off

    settings = load_settings()
    if turned_off(settings, event):
        return ""  # no store opened, no daemon started
    light = replace(settings, embeddings=replace(settings.embeddings, provider="none"))
    # A home that cannot be written (a read-only mount) is still read: the hooks answer.
    writable = not settings.db_path.is_file() or can_write_store(settings)
    busy = _SERVER_TIMEOUT_MS if settings.on_server else _BUSY_TIMEOUT_MS
    with open_app(light, busy_timeout_ms=busy, read_only=not writable) as app:
        text = handle(app, event, payload, settings.project, settings.cwd, settings.agent_dirs)
    if event == "session-start" and text and writable and settings.hooks.autostart_daemon:
        from contextd.wire.launch import start_quietly  # (subprocess) only here

        start_quietly(settings.home)  # only inside a known project
    return agent_reply(event, text, payload)
