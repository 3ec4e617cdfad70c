"""The SWORDS scheme's settings (docs/design.md §2), checked in one place (``SchemeSettings.from_json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemes.base import SchemeSettings, setting

if TYPE_CHECKING:
    from annotation.models import Benchmark

# SWORDS App. B.2 caps a HIT at ten candidates (plus its two controls).
MAX_CANDIDATES_PER_HIT = 10


@dataclass(frozen=True)
class SwordsSettings(SchemeSettings):
    candidates_per_hit: int = setting(
        10,
        minimum=1,
        maximum=MAX_CANDIDATES_PER_HIT,
        help="candidates in one HIT, besides its two controls",
        label="Candidates per HIT",
        unit="candidates",
    )
    step2_labels: int = setting(
        3, minimum=1, help="valid labels per candidate in step 2 (reduce)", label="Labels in step 2", unit="labels"
    )
    step3_labels: int = setting(
        7,
        minimum=0,
        help="further labels per surviving candidate in step 3 (score)",
        label="Labels in step 3",
        unit="labels",
    )
    pass_min_accepts: int = setting(
        1,
        minimum=1,
        help="accepts in step 2 that keep a candidate for step 3",
        label="Accepts to pass step 2",
        unit="accepts",
    )
    min_control_accuracy: float = setting(
        0.90,
        minimum=0.0,
        maximum=1.0,
        help="share of correct control answers below which a worker is filtered",
        label="Least control accuracy",
        unit="share, 0 to 1",
    )
    step1_proposers: int = setting(
        5,
        minimum=1,
        maximum=100,
        help="annotators who propose substitutes for each target in step 1 (generation)",
        label="Proposers in step 1",
        unit="annotators",
    )

    @property
    def total_labels(self) -> int:
        return self.step2_labels + self.step3_labels


def settings_of(benchmark: Benchmark) -> SwordsSettings:
    """A SWORDS benchmark's settings, checked (``SchemeSettingsError`` names a bad stored value)."""
    return SwordsSettings.from_json(benchmark.scheme_settings)
