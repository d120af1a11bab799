"""What waits for a person before it is memory (`[capture] review`): the policies, and which
new records each one holds. The queue itself is contextd.core.writing.review."""

from contextd.models import Origin, RecordDraft

__all__ = ["POLICIES", "PROPOSAL", "held_by"]

POLICIES = ("off", "agent", "all")
PROPOSAL = "proposal"  # asked_by of what a model read out of a transcript: always held


def held_by(policy: str, draft: RecordDraft) -> bool:
    """Whether a new record waits for a person: under "agent" what agents write (through MCP,
    whatever origin they claim, or as origin agent), under "all" also what contextd captured
    for them (drafted checkpoints). A model's proposal always waits, whatever the policy."""
    if draft.asked_by == PROPOSAL:
        return True
    if draft.asked_by == "capture":
        return policy == "all"
    by_agent = draft.asked_by == "agent" or draft.origin is Origin.AGENT
    return by_agent and policy in ("agent", "all")
