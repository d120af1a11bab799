"""What `search`, `recall` and the record commands print, from their answers as plain data
(see contextd.core.recall.answers and contextd.core.reading.views): the same code runs
whether the answer was computed in this process or by the daemon, so both print the same
bytes. The standard library only, like the daemon's fast
client that uses it."""

from typing import Any

from contextd.text.grammar import counted
from contextd.text.printer import (
    Printout,
    clip,
    json_text,
    kind_cell,
    state_cell,
    style,
    table_lines,
)

__all__ = ["answer_printout", "recall_printout", "search_printout", "write_printout"]

NO_MATCHES = "No matches. Try other words, or --include-superseded for history."
NOTHING = "Nothing relevant stored."


def answer_printout(asks: str, reply: dict[str, Any], explain: bool, as_json: bool) -> Printout:
    """What a hot command prints of its answer (contextd.service.answer's reply): a search's
    or a recall's hits, or the record a write stored.

    Raises:
        KeyError, TypeError: the reply is not of the shape its request gets.
    """
    if asks == "write":
        written = reply["written"]
        return write_printout("Recorded", written["view"], written["shorts"], as_json)
    render = search_printout if asks == "search" else recall_printout
    return render(reply["answer"], explain, as_json)


def search_printout(answer: dict[str, Any], explain: bool, as_json: bool) -> Printout:
    hits = answer["hits"]
    if as_json:
        payload = {
            "query": answer["query"],
            "project": answer["project"],
            "results": [h["view"] for h in hits],
        }
        return [(1, _json(payload, answer))]
    out = _note(answer)
    if not hits:
        return [*out, (1, NO_MATCHES + "\n")]
    rows = [
        [
            style(h["short"], fg="bright_black"),
            kind_cell(h["kind"], h["label"]),
            " ".join(x for x in (state_cell(h["state"]), _tier_cell(h)) if x),
            h["title"],
            f"{h['score']:.2f}" + (" linked" if h["linked_from"] else ""),
        ]
        for h in hits
    ]
    out += [(1, line + "\n") for line in table_lines(rows)]
    if explain:
        out += [(1, "\n"), *_explained(hits)]
    return out


def recall_printout(answer: dict[str, Any], explain: bool, as_json: bool) -> Printout:
    hits = answer["hits"]
    if as_json:
        payload = {
            "query": answer["query"],
            "project": answer["project"],
            "budget": answer["budget"],
            "tokens": answer["tokens"],
            "omitted": answer["omitted"],
            "context": answer["context"],
            "results": [h["view"] for h in hits],
        }
        return [(1, _json(payload, answer))]
    omitted = answer["omitted"]
    footer = f"\n{counted(len(hits), 'passage')}, ~{answer['tokens']}/{answer['budget']} tokens" + (
        f", {omitted} more left out for the budget" if omitted else ""
    )
    out = _note(answer)
    out += [
        (1, (answer["context"] or NOTHING) + "\n"),
        (2, style(footer, fg="bright_black") + "\n"),
    ]
    return out + _explained(hits) if explain else out


def _note(answer: dict[str, Any]) -> Printout:
    degraded = answer.get("degraded")
    return [(2, style(f"Note: {degraded}.", fg="yellow") + "\n")] if degraded else []


def _explained(hits: list[dict[str, Any]]) -> Printout:
    lines = []
    for h in hits:
        t = h["terms"]
        line = (
            f"{h['short']}  fts {t['fts']:.3f} + semantic {t['semantic']:.3f} + "
            f"priority {t['priority']:.3f} + recency {t['recency']:.3f} + project "
            f"{t['project_match']:.3f} + trust {t['trust']:.3f} + feedback {t['feedback']:.3f}, "
            f"x {t['status_multiplier']:.2f} "
            f"= {h['score']:.3f}"
        )
        if h["linked_from"]:
            line += f" (linked from {h['linked_short']})"
        lines.append((1, line + "\n"))
    return lines


def _json(payload: dict[str, Any], answer: dict[str, Any]) -> str:
    if answer.get("degraded"):
        payload["degraded"] = answer["degraded"]
    return json_text(payload, indent=2) + "\n"


HELD_NOTE = "It is not in memory until a person approves it: contextd review approve ID."


def write_printout(
    verb: str, view: dict[str, Any], shorts: dict[str, str], as_json: bool
) -> Printout:
    """A record just stored or changed (`written_view`), with the stored records it resembles:
    a restatement or a contradiction is the writer's to judge."""
    if as_json:
        return [(1, json_text(view, indent=2) + "\n")]
    new = shorts.get(view["id"], view["id"])
    where = " (global)" if view["project_id"] is None else ""
    if view.get("group"):
        where = f" (group {view['group']})"
    held = view.get("held_for_review") is True
    out: Printout = [
        (
            1,
            f"{'Held for review' if held else verb} {view['kind']} {style(new, bold=True)}"
            f"{where}: {view['title']}\n",
        )
    ]
    if held:
        out.append((1, f"{HELD_NOTE}\n"))
    similar = view["similar"]
    if similar:
        heading = style("Similar records (a restatement or a contradiction?):", fg="yellow")
        out.append((1, heading + "\n"))
    for item in similar:
        label = f" {item['label']}" if item.get("label") else ""
        short = shorts.get(item["id"], item["id"])
        line = f"  {short}  {item['similarity']:.0%}{label}  {clip(item['title'], 70)}"
        out.append((1, line + "\n"))
    for item in similar:
        if item.get("likely_replaces"):
            old = shorts.get(item["id"], item["id"])
            advice = (
                f"This seems to replace {old} ({item['likely_replaces']}); if so: "
                f"contextd supersede {old} --by {new}"
            )
            out.append((1, style(advice, fg="yellow") + "\n"))
    return out


def _tier_cell(hit: dict[str, Any]) -> str:
    """ "global" or "group" for a record the project sees from above it; "" for its own."""
    scope = hit["view"].get("scope")
    return "group" if scope == "group" else "global" if hit["is_global"] else ""
