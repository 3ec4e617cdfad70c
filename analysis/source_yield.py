"""Which candidate source pays off (docs/design.md §14): per source, the candidates it contributed,
the labels spent on them, the share its scheme calls acceptable and conceivable, and what an
acceptable candidate cost. Pure: rows in, JSON-ready rows out (``analysis.services.sources`` reads them).

A candidate proposed by several sources counts for each of them, its labels too; ``only_this_source``
counts the candidates no other source proposed, what the source alone brought.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

#: What a candidate stored without a source is listed under.
NO_SOURCE = "(no source)"
CENT = Decimal("0.0001")


@dataclass(frozen=True)
class SourceCategories:
    """A scheme's two decisions on a candidate, in its own words: ``decide(accepts, rejects,
    abstains)`` -> (acceptable, conceivable), asked only of a candidate with at least one valid label.
    Declared by a scheme's figures (``SchemeFigures.source_categories``)."""

    acceptable: str
    conceivable: str
    decide: Callable[[int, int, int], tuple[bool, bool]]


class CountProfile(NamedTuple):
    """How many candidates of ``source`` (alone among their sources or not) have these valid labels."""

    source: str
    alone: bool
    accepts: int
    rejects: int
    abstains: int
    candidates: int


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def source_yield(
    profiles: Iterable[CountProfile], categories: SourceCategories, price_per_label: Decimal | None
) -> list[dict[str, Any]]:
    """One row per source, most candidates first (then by name): candidates, only_this_source,
    judged (with a valid label), labels, acceptable, conceivable, their shares of the judged, and,
    with a price per label, the cost of its labels and per acceptable candidate (None without an
    acceptable one). Money is a string of dollars to four places."""
    totals: dict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(("candidates", "only_this_source", "judged", "labels", "acceptable", "conceivable"), 0)
    )
    for profile in profiles:
        row = totals[profile.source or NO_SOURCE]
        count = profile.candidates
        row["candidates"] += count
        row["only_this_source"] += count if profile.alone else 0
        labels = profile.accepts + profile.rejects + profile.abstains
        if not labels:
            continue
        acceptable, conceivable = categories.decide(profile.accepts, profile.rejects, profile.abstains)
        row["judged"] += count
        row["labels"] += labels * count
        row["acceptable"] += count if acceptable else 0
        row["conceivable"] += count if conceivable else 0
    rows: list[dict[str, Any]] = []
    for source, row in sorted(totals.items(), key=lambda item: (-item[1]["candidates"], item[0])):
        cost = price_per_label * row["labels"] if price_per_label is not None else None
        rows.append(
            {
                "source": source,
                **row,
                "share_acceptable": _share(row["acceptable"], row["judged"]),
                "share_conceivable": _share(row["conceivable"], row["judged"]),
                "cost": None if cost is None else str(cost.quantize(CENT)),
                "cost_per_acceptable": (
                    None if cost is None or not row["acceptable"] else str((cost / row["acceptable"]).quantize(CENT))
                ),
            }
        )
    return rows
