"""What the read-along page should show at a time, worked out from its guided.json alone (for the page tests)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SpokenLine:
    id: str
    page: int
    start_s: float
    end_s: float
    text: str


def spoken_lines(folder: Path) -> list[SpokenLine]:
    """Every balloon of the export with its page and its stretch of the narration, in time order."""
    found: list[SpokenLine] = []

    def visit(node: dict[str, object], page: int) -> None:
        audioref = node.get("audioref")
        if "text" in node and isinstance(audioref, str):
            start, end = (float(v) for v in audioref.split("#t=")[1].split(","))
            found.append(SpokenLine(str(node["id"]), page, start, end, str(node["text"])))
        for child in node.get("children", []) or []:  # type: ignore[attr-defined]
            visit(child, page)

    for page, node in enumerate(json.loads((folder / "guided.json").read_text(encoding="utf-8"))["guided"]):
        visit(node, page)
    return sorted(found, key=lambda line: line.start_s)


def line_at(lines: list[SpokenLine], time_s: float) -> SpokenLine | None:
    return next((line for line in lines if line.start_s <= time_s < line.end_s), None)
