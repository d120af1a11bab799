"""What a compaction lost: the records a session was given before the snapshot and not since."""

import pytest

from contextd.app import App
from contextd.core.recall import compaction
from contextd.models import Kind, MemoryBody, RecordDraft


def test_a_record_shown_in_the_snapshots_own_millisecond_is_lost_unless_shown_again(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook that notes what it showed and a compaction right after can share a timestamp
    (they are stored to the millisecond); what was shown then came before the snapshot."""
    project = app.current_project()
    draft = RecordDraft(Kind.MEMORY, "Deploys run from release tags only", MemoryBody(), "gotcha")
    record = app.writer.create(draft, project, force=True)
    monkeypatch.setattr(compaction, "now", lambda: "2026-12-06T10:00:00.000Z")
    app.hook_state.note_shown("sess-1", [record], "briefing")
    app.hook_state.snapshot("sess-1", project, "auto", 0)
    report = app.hook_state.report(project, "sess-1")
    assert report is not None and [r.id for r in report.lost] == [record.id]

    monkeypatch.setattr(compaction, "now", lambda: "2026-12-06T10:00:00.001Z")
    app.hook_state.note_shown("sess-2", [record], "briefing")
    app.hook_state.snapshot("sess-2", project, "auto", 0)
    monkeypatch.setattr(compaction, "now", lambda: "2026-12-06T10:00:05.000Z")
    app.hook_state.note_shown("sess-2", [record], "briefing")  # given again after it
    report = app.hook_state.report(project, "sess-2")
    assert report is not None and report.lost == ()
