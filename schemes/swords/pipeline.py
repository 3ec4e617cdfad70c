"""The three-step pipeline's decisions (docs/design.md §6, SWORDS §3.2), as pure functions.

Step 2 (reduce) collects ``step2_labels`` valid labels per candidate; a candidate with at
least ``pass_min_accepts`` accepts among them goes on to step 3 (score), the rest are final
with score 0. Step 3 collects ``step3_labels`` more valid labels on the survivors. Stages are
the strings of ``annotation.models.TargetStage`` and ``CandidateStage``.

Under a stopping policy other than swords (``rule``, docs/design.md §13), step 2 collects the
policy's first round; a candidate the rule has decided by then without an accept is dropped, the
others go on to step 3, where each candidate still undecided asks for the next round the rule sizes
(``StoppingRule.labels_to_buy``) in follow-up batches until it is decided. A candidate that left
the rounds (dropped, or scored once its target was done) keeps its decision.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from schemes.progress import CANDIDATE, TARGET, StageMove, StageMoves
from schemes.swords.stopping import StoppingRule

ACCEPT = "accept"

# Candidate stages (annotation.models.CandidateStage); kept as strings so this module needs no Django.
REDUCE = "reduce"
SCORE = "score"
DROPPED = "dropped"
FINAL = "final"
# Excluded by a researcher (docs/annotator.md): needs no labels, so it never holds its target back.
EXCLUDED = "excluded"
DONE = "done"
SURVIVING_STAGES = frozenset({SCORE, FINAL})


class Step2Outcome(enum.Enum):
    PENDING = "pending"
    PASS = "pass"
    DROP = "drop"


def candidate_passes(*, accepts: int, pass_min_accepts: int) -> bool:
    """The step-2 pass rule: enough accepts among the candidate's valid step-2 labels."""
    if accepts < 0:
        raise ValueError("accepts cannot be negative")
    return accepts >= pass_min_accepts


def step2_outcome(values: Sequence[str], *, step2_labels: int, pass_min_accepts: int) -> Step2Outcome:
    """Decide a candidate from its valid step-2 label values; PENDING until it has ``step2_labels`` of them."""
    if len(values) < step2_labels:
        return Step2Outcome.PENDING
    accepts = sum(1 for value in values if value == ACCEPT)
    return (
        Step2Outcome.PASS if candidate_passes(accepts=accepts, pass_min_accepts=pass_min_accepts) else Step2Outcome.DROP
    )


def target_ready_to_advance(step2_valid_counts: Iterable[int], *, step2_labels: int) -> bool:
    """A target leaves step 2 once every one of its candidates has its step-2 valid labels."""
    return all(count >= step2_labels for count in step2_valid_counts)


class CandidateProgress(NamedTuple):
    """What the pipeline knows of one candidate: its stage and its valid labels, by step and in all.

    A named tuple, as immutable as a frozen dataclass and several times faster to make: a refresh
    reads one for every candidate of the benchmark (``progress.candidate_progress``)."""

    candidate_id: int
    stage: str
    step2_valid: int
    step2_accepts: int
    valid_total: int
    # Accepts among all its valid labels, and the key of its sources' prior (stopping.source_key).
    accepts: int = 0
    source: str = ""


def _decided(rule: StoppingRule, candidate: CandidateProgress) -> bool:
    """The rule's decision on what it reads of the candidate (its weighted evidence, or its counts);
    a candidate with the design's maximum of valid labels is decided whatever their weights."""
    if candidate.valid_total >= rule.maximum:
        return True
    accepts, labels = rule.counts(candidate.candidate_id, candidate.accepts, candidate.valid_total)
    return rule.decided(accepts, labels, candidate.source)


def labels_required(stage: str, *, step2_labels: int, step3_labels: int) -> int:
    """Valid labels a candidate in ``stage`` must end with: none if excluded, step 2's alone if dropped,
    all ten otherwise."""
    if stage == EXCLUDED:
        return 0
    if stage == DROPPED:
        return step2_labels
    if stage in SURVIVING_STAGES:
        return step2_labels + step3_labels
    return step2_labels


def labels_missing(
    candidate: CandidateProgress,
    *,
    step: int,
    step2_labels: int,
    step3_labels: int,
    rule: StoppingRule | None = None,
) -> int:
    """Valid labels a candidate still lacks in ``step``: what a batch of that step collects for it.

    Step 2 counts the candidate's step-2 labels; step 3 counts all of them, so a survivor with
    five valid labels (imported or collected, whatever their step) lacks five of its ten. Labels
    the benchmark already has are never asked for again (docs/design.md §2). Under a ``rule``,
    step 3 asks for the candidate's next round, none once it is decided or out of the rounds.
    """
    if step == 2:
        return max(0, step2_labels - candidate.step2_valid)
    if rule is not None:
        if candidate.stage != SCORE:
            return 0
        if candidate.valid_total >= rule.maximum:
            return 0
        wanted = rule.labels_to_buy(
            *rule.counts(candidate.candidate_id, candidate.accepts, candidate.valid_total), candidate.source
        )
        # A replay asks no more than its release still holds for the candidate (docs/design.md §13).
        return min(wanted, rule.available.get(candidate.candidate_id, wanted))
    return max(0, step2_labels + step3_labels - candidate.valid_total)


def candidate_complete(
    candidate: CandidateProgress, *, step2_labels: int, step3_labels: int, rule: StoppingRule | None = None
) -> bool:
    if candidate.stage == EXCLUDED:
        return True
    if candidate.stage == REDUCE:
        return False
    if rule is not None:
        # Out of the rounds, a decision stands; in them, the rule decides.
        if candidate.stage != SCORE:
            return True
        return _decided(rule, candidate)
    if candidate.step2_valid < step2_labels:
        return False
    return candidate.valid_total >= labels_required(
        candidate.stage, step2_labels=step2_labels, step3_labels=step3_labels
    )


def target_done(
    candidates: Sequence[CandidateProgress], *, step2_labels: int, step3_labels: int, rule: StoppingRule | None = None
) -> bool:
    """A target is done when every candidate is decided and has its labels: 3 if dropped, 3 + 7 if scored,
    none if excluded (under a ``rule``: when the rule has decided every candidate still in the rounds).

    A target with no candidates left in step 2 is done as soon as nothing remains to collect.
    """
    return all(
        candidate_complete(candidate, step2_labels=step2_labels, step3_labels=step3_labels, rule=rule)
        for candidate in candidates
    )


@dataclass(frozen=True)
class Advancement:
    """What advancing one target out of step 2 decides: who goes on, who is dropped."""

    passed: tuple[int, ...]
    dropped: tuple[int, ...]

    @property
    def needs_step3(self) -> bool:
        return bool(self.passed)


def advance_target(
    candidates: Sequence[CandidateProgress],
    *,
    step2_labels: int,
    pass_min_accepts: int,
    rule: StoppingRule | None = None,
) -> Advancement | None:
    """Split a step-2 target's candidates by the pass rule, or None if some candidate still lacks labels.

    Under a ``rule``, a candidate the rule has decided without an accept is dropped (inconceivable,
    final) and every other goes on: to the rounds if undecided, to wait for its target if decided.
    """
    if not target_ready_to_advance((c.step2_valid for c in candidates), step2_labels=step2_labels):
        return None
    if rule is not None:
        passed = tuple(c.candidate_id for c in candidates if c.accepts > 0 or not _decided(rule, c))
    else:
        passed = tuple(
            c.candidate_id
            for c in candidates
            if candidate_passes(accepts=c.step2_accepts, pass_min_accepts=pass_min_accepts)
        )
    passed_ids = set(passed)
    dropped = tuple(c.candidate_id for c in candidates if c.candidate_id not in passed_ids)
    return Advancement(passed=passed, dropped=dropped)


def refresh_moves(
    stages: Mapping[int, str],
    progress: Mapping[int, Sequence[CandidateProgress]],
    *,
    step2_labels: int,
    step3_labels: int,
    pass_min_accepts: int,
    rule: StoppingRule | None = None,
) -> StageMoves:
    """What a refresh moves among the targets of ``stages`` (target id -> stage), given each one's
    candidates (``progress``): the decision ``review.services.advance`` writes (docs/design.md §6).

    reduce → score when every candidate has its step-2 labels: survivors go on (their targets need
    a step-3 follow-up batch when a survivor lacks labels), the rest are dropped. score → done when
    every candidate has the labels its stage needs; done → score again as soon as one lacks some
    (work filtered or rejected, imported labels removed). Pass decisions, once made, are not
    revisited. A target advanced here may be done at once (no survivor, or survivors with all ten).

    Under a stopping ``rule`` (``step2_labels`` is then the policy's first round), every target in
    step 3 whose undecided candidates lack their next round is listed for a follow-up batch (which
    leaves alone what an open batch still collects), so batches grow in rounds.
    """
    stages = dict(stages)
    current = {target_id: list(candidates) for target_id, candidates in progress.items()}
    result = StageMoves()
    passed: list[int] = []
    dropped: list[int] = []
    for target_id, stage in sorted(stages.items()):
        if stage != REDUCE:
            continue
        candidates = current.get(target_id, [])
        advancement = advance_target(
            [c for c in candidates if c.stage == REDUCE],
            step2_labels=step2_labels,
            pass_min_accepts=pass_min_accepts,
            rule=rule,
        )
        if advancement is None:
            continue
        passed.extend(advancement.passed)
        dropped.extend(advancement.dropped)
        result.advanced.append(target_id)
        stages[target_id] = SCORE
        new_stage = {pk: SCORE for pk in advancement.passed} | {pk: DROPPED for pk in advancement.dropped}
        current[target_id] = [c._replace(stage=new_stage.get(c.candidate_id, c.stage)) for c in candidates]
        if rule is None and any(
            labels_missing(c, step=3, step2_labels=step2_labels, step3_labels=step3_labels)
            for c in current[target_id]
            if c.stage == SCORE
        ):
            result.followup.append(target_id)
    if result.advanced:
        result.moves += [
            StageMove(CANDIDATE, REDUCE, SCORE, tuple(passed)),
            StageMove(CANDIDATE, REDUCE, DROPPED, tuple(dropped)),
            StageMove(TARGET, REDUCE, SCORE, tuple(result.advanced)),
        ]
    for target_id, stage in sorted(stages.items()):
        if stage not in (SCORE, DONE):
            continue
        complete = target_done(
            current.get(target_id, []), step2_labels=step2_labels, step3_labels=step3_labels, rule=rule
        )
        if stage == SCORE and complete:
            result.done.append(target_id)
        elif stage == DONE and not complete:
            result.reopened.append(target_id)
        elif stage == SCORE and rule is not None:
            # The next round of its undecided candidates (decided ones lack nothing).
            result.followup.append(target_id)
    if result.done:
        finals = tuple(c.candidate_id for t in result.done for c in current.get(t, []) if c.stage == SCORE)
        result.moves += [StageMove(CANDIDATE, SCORE, FINAL, finals), StageMove(TARGET, SCORE, DONE, tuple(result.done))]
    if result.reopened:
        scored = tuple(c.candidate_id for t in result.reopened for c in current.get(t, []) if c.stage == FINAL)
        result.moves += [
            StageMove(CANDIDATE, FINAL, SCORE, scored),
            StageMove(TARGET, DONE, SCORE, tuple(result.reopened)),
        ]
    return result
