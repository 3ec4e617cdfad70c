"""The SWORDS scheme's settings (docs/design.md §2), checked in one place (``SchemeSettings.from_json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from schemes.base import SchemeSettings, setting

if TYPE_CHECKING:
    from annotation.models import Benchmark

# SWORDS App. B.2 caps a HIT at ten candidates (plus its two controls).
MAX_CANDIDATES_PER_HIT = 10
# When a candidate has labels enough (docs/design.md §13; schemes.swords.stopping).
STOPPING_POLICIES = ("swords", "curtail", "adaptive")
# The adaptive stop's prior and what it reads of a candidate's labels (schemes.swords.stopping).
ADAPTIVE_PRIORS = ("mixture", "beta")
ADAPTIVE_EVIDENCE = ("counts", "dawid_skene", "mace")
# The score an adaptive benchmark's candidates are evaluated with (docs/design.md §13).
ADAPTIVE_SCORES = ("published", "expected")


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
    stopping_policy: str = setting(
        "swords",
        choices=STOPPING_POLICIES,
        help="when a candidate has labels enough: swords (step 2, then step 3 for those with an accept), curtail "
        "(once no remaining label could change a decision) or adaptive (once a change is unlikely)",
        label="Stopping policy",
        unit="swords, curtail or adaptive",
    )
    adaptive_epsilon: float = setting(
        0.02,
        minimum=0.0,
        maximum=0.5,
        help="adaptive policy: stop a candidate once the chance that its remaining labels change a decision is "
        "below this (with the mixture prior: the acceptable decision)",
        label="Adaptive stop: largest chance of a change",
        unit="probability",
    )
    adaptive_epsilon_conceivable: float = setting(
        0.1,
        minimum=0.0,
        maximum=0.5,
        help="adaptive policy with the mixture prior: the largest chance that the remaining labels make a "
        "candidate without an accept conceivable (or take it out) at which it stops",
        label="Adaptive stop: largest chance of a conceivable change",
        unit="probability",
    )
    adaptive_prior: str = setting(
        "mixture",
        choices=ADAPTIVE_PRIORS,
        help="adaptive policy: the prior per candidate source on a candidate's share of accepts, fitted to this "
        "benchmark's labels: mixture (any shape, fitted by likelihood; a separate chance for each decision) or "
        "beta (one Beta by the moments; one chance for either decision)",
        label="Adaptive stop: prior",
        unit="mixture or beta",
    )
    adaptive_evidence: str = setting(
        "counts",
        choices=ADAPTIVE_EVIDENCE,
        help="adaptive policy: what the stop reads of a candidate's labels: counts (every valid label alike), or "
        "labels weighed by their worker's reliability from Dawid-Skene or MACE, anchored by the controls",
        label="Adaptive stop: evidence",
        unit="counts, dawid_skene or mace",
    )
    adaptive_score: str = setting(
        "published",
        choices=ADAPTIVE_SCORES,
        help="adaptive policy: the score the evaluation reads of a candidate: published (accepts / (accepts + "
        "rejects), as SWORDS) or expected (the score expected with the design's maximum of labels, the labels a "
        "stop saved counted at the posterior share of a candidate with an accept); other policies read the published",
        label="Adaptive stop: evaluated score",
        unit="published or expected",
    )
    adaptive_floor: int = setting(
        2,
        minimum=1,
        help="adaptive policy: labels every candidate gets before it may stop",
        label="Adaptive stop: labels at least",
        unit="labels",
    )

    @property
    def total_labels(self) -> int:
        return self.step2_labels + self.step3_labels

    @property
    def reduce_labels(self) -> int:
        """Valid labels step 2 collects per candidate: ``step2_labels`` under the swords and curtail
        policies, the floor (at most the design's maximum) under adaptive."""
        if self.stopping_policy == "adaptive":
            return min(self.adaptive_floor, self.total_labels)
        return self.step2_labels


def settings_of(benchmark: Benchmark) -> SwordsSettings:
    """A SWORDS benchmark's settings, checked (``SchemeSettingsError`` names a bad stored value)."""
    return SwordsSettings.from_json(benchmark.scheme_settings)
