"""The stopping policies' decision rules over hand-worked label sequences (docs/design.md §13)."""

import math

import pytest

from schemes.swords.stopping import (
    ADAPTIVE,
    CURTAIL,
    DEFAULT_PRIOR,
    GRID,
    MIN_CANDIDATES_FOR_PRIOR,
    UNIFORM_MIXTURE,
    MixturePrior,
    Prior,
    StoppingRule,
    adaptive_decided,
    beta_binomial_pmf,
    beta_on_grid,
    change_probabilities,
    change_probability,
    curtail_decided,
    decisions,
    estimate_mixture,
    estimate_prior,
    source_key,
    swords_decided,
    weighted_counts,
)

A, R = "accept", "reject"


def counts(sequence: str) -> tuple[int, int]:
    """(accepts, labels) of a sequence like "arra" (a: accept; r: reject or abstain)."""
    return sequence.count("a"), len(sequence)


def test_decisions_follow_the_score_thresholds() -> None:
    assert decisions(6, 10) == (True, True)  # 0.6 > 0.5
    assert decisions(5, 10) == (False, True)  # 0.5 is not above 0.5
    assert decisions(0, 3) == (False, False)
    assert decisions(0, 0) == (False, False)


@pytest.mark.parametrize(
    ("sequence", "decided"),
    [
        # 3 rejects, 7 to come: 0/10 and 7/10 differ on both decisions.
        ("rrr", False),
        # 1 accept then 4 rejects: 1/10 vs 6/10 still differ on acceptable.
        ("arrrr", False),
        # 1 accept, 5 rejects: 1/10 and 5/10 are both conceivable, neither acceptable.
        ("arrrrr", True),
        # 6 accepts: 6/10 and 10/10 are both acceptable.
        ("aaaaaa", True),
        # 5 accepts, 4 rejects: 5/10 is not acceptable, 6/10 is.
        ("aaaaarrrr", False),
        # 9 rejects: 0/10 inconceivable, 1/10 conceivable.
        ("rrrrrrrrr", False),
        # all ten: nothing to come.
        ("rrrrrrrrrr", True),
    ],
)
def test_curtail_stops_once_no_remaining_label_can_change_a_decision(sequence: str, decided: bool) -> None:
    accepts, labels = counts(sequence)
    assert curtail_decided(accepts, labels, maximum=10) is decided


def test_curtail_buys_the_fewest_labels_that_could_stop_a_candidate() -> None:
    rule = StoppingRule(CURTAIL, maximum=10)
    # 3 rejects: the earliest stop is 1 accept and 2 more rejects (1 accept, 5 non-accepts): 3 labels.
    assert rule.labels_to_buy(0, 3) == 3
    # 3 accepts: 3 more accepts reach 6 (acceptable settled), 3 labels.
    assert rule.labels_to_buy(3, 3) == 3
    # 9 rejects: the tenth label.
    assert rule.labels_to_buy(0, 9) == 1
    # 2 accepts, 2 rejects: 3 more rejects reach 5 non-accepts with an accept: 3 labels.
    assert rule.labels_to_buy(2, 4) == 3
    assert rule.labels_to_buy(6, 6) == 0


def test_the_swords_rule_on_counts_drops_after_step_two_without_an_accept() -> None:
    assert swords_decided(0, 3, step2_labels=3, pass_min_accepts=1, maximum=10)
    assert not swords_decided(1, 3, step2_labels=3, pass_min_accepts=1, maximum=10)
    assert not swords_decided(0, 2, step2_labels=3, pass_min_accepts=1, maximum=10)
    assert swords_decided(1, 10, step2_labels=3, pass_min_accepts=1, maximum=10)


def test_the_beta_binomial_under_a_uniform_prior_is_uniform() -> None:
    # BetaBinomial(4, 1, 1): every k of 0..4 has probability 1/5.
    for k in range(5):
        assert beta_binomial_pmf(k, 4, 1.0, 1.0) == pytest.approx(1 / 5)
    assert beta_binomial_pmf(5, 4, 1.0, 1.0) == 0.0


def test_the_change_probability_of_nine_rejects_is_the_chance_the_tenth_is_an_accept() -> None:
    # Uniform prior, 0 of 9: posterior Beta(1, 10); the tenth label is an accept with probability
    # 1 / 11, which makes the candidate conceivable (1/10 > 0).
    assert change_probability(0, 9, maximum=10, prior=DEFAULT_PRIOR) == pytest.approx(1 / 11)
    # 0 of 2: posterior Beta(1, 3), 8 to come; P(K = 0) = B(1, 11) / B(1, 3) = (1/11) / (1/3) = 3/11;
    # every K >= 1 makes it conceivable, so the change has probability 8/11.
    assert change_probability(0, 2, maximum=10, prior=DEFAULT_PRIOR) == pytest.approx(8 / 11)
    # 3 of 3: posterior Beta(4, 1); acceptable falls if at most 2 of the 7 to come are accepts:
    # 4 * [B(4, 8) + 7 B(5, 7) + 21 B(6, 6)] = 4 * (1/1320 + 7/2310 + 21/2772) = 1/22.
    assert change_probability(3, 3, maximum=10, prior=DEFAULT_PRIOR) == pytest.approx(1 / 22)
    # 6 of 6: both decisions are settled whatever comes.
    assert change_probability(6, 6, maximum=10, prior=DEFAULT_PRIOR) == 0.0


def test_a_source_that_is_almost_never_accepted_stops_its_rejects_early() -> None:
    prior = Prior(0.05, 2.0)
    # 0 of 2: posterior Beta(0.05, 4); P(K = 0 of 8) = prod_{i=0}^{7} (4 + i) / (4.05 + i), each
    # factor about 1 - 0.05 / (4.05 + i): 1 - 0.05 * (1/4.05 + ... + 1/11.05) = 1 - 0.05 * 1.175 = 0.943.
    stay = math.prod((4 + i) / (4.05 + i) for i in range(8))
    assert stay == pytest.approx(0.943, abs=1e-3)
    assert change_probability(0, 2, maximum=10, prior=prior) == pytest.approx(1 - stay)
    # 1 - 0.943 = 0.057: above epsilon 0.05, below 0.06.
    assert not adaptive_decided(0, 2, maximum=10, prior=prior, epsilon=0.05, floor=2)
    assert adaptive_decided(0, 2, maximum=10, prior=prior, epsilon=0.06, floor=2)


def test_adaptive_never_stops_before_its_floor_and_always_at_a_certain_decision() -> None:
    prior = Prior(0.05, 2.0)
    # One reject: under the floor of 2, however unlikely an accept.
    assert not adaptive_decided(0, 1, maximum=10, prior=prior, epsilon=0.5, floor=2)
    # Epsilon 0 stops only where curtail would: 6 accepts yes, 9 rejects no (1/11 > 0).
    assert adaptive_decided(6, 6, maximum=10, prior=DEFAULT_PRIOR, epsilon=0.0, floor=2)
    assert not adaptive_decided(0, 9, maximum=10, prior=DEFAULT_PRIOR, epsilon=0.0, floor=2)
    # 9 rejects at epsilon 0.1: 1/11 = 0.0909 < 0.1 stops it.
    assert adaptive_decided(0, 9, maximum=10, prior=DEFAULT_PRIOR, epsilon=0.1, floor=2)
    assert adaptive_decided(0, 10, maximum=10, prior=DEFAULT_PRIOR, epsilon=0.0, floor=2)


def test_an_adaptive_round_is_the_fewest_labels_after_which_some_outcome_stops() -> None:
    rule = StoppingRule(ADAPTIVE, maximum=10, epsilon=0.06, floor=2, priors={"roget": Prior(0.05, 2.0)})
    # A reject from the thesaurus: one more reject reaches 0 of 2, which stops (0.057 < 0.06).
    assert rule.labels_to_buy(0, 1, "roget") == 1
    assert rule.labels_to_buy(0, 2, "roget") == 0
    # Under the uniform prior 0 of 2 is far from decided; its round is the fewest labels after which
    # some outcome would stop, and one label fewer would stop no outcome.
    k = rule.labels_to_buy(0, 2, "")
    assert 1 <= k <= 8
    assert any(rule.decided(j, 2 + k, "") for j in range(k + 1))
    assert not any(rule.decided(j, 2 + k - 1, "") for j in range(k))


def test_a_prior_needs_enough_candidates_and_follows_their_spread() -> None:
    few = [(0, 3)] * (MIN_CANDIDATES_FOR_PRIOR - 1)
    assert estimate_prior(few) == DEFAULT_PRIOR
    # Half the candidates 0 of 3, half 3 of 3: m = (60 + 0.5) / (120 + 1) = 0.5, S = 0.25,
    # mean(1/n) = 1/3, rho = (0.25 / 0.25 - 1/3) / (2/3) = 1, held at 0.95: alpha = beta = (1/0.95 - 1) / 2.
    split = estimate_prior([(0, 3)] * 20 + [(3, 3)] * 20)
    assert split.alpha == pytest.approx((1 / 0.95 - 1) / 2)
    assert split.beta == pytest.approx(split.alpha)
    # Every candidate 1 of 2: no spread beyond chance, rho held at 0.01: alpha + beta = 99, m = 40.5/81 = 0.5.
    even = estimate_prior([(1, 2)] * 40)
    assert even.alpha == pytest.approx(49.5)
    assert even.beta == pytest.approx(49.5)
    # Single labels say nothing of the spread.
    assert estimate_prior([(1, 1)] * 100) == DEFAULT_PRIOR


def test_sources_key_their_prior_in_any_order() -> None:
    assert source_key(["thesaurus", "CoInCo"]) == "coinco+thesaurus"
    assert source_key([]) == ""


def test_a_bad_count_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0"):
        curtail_decided(4, 3, maximum=10)
    with pytest.raises(ValueError, match="curtail or adaptive"):
        StoppingRule("swords", maximum=10)


def test_a_refresh_under_curtail_drops_only_decided_inconceivable_candidates_and_asks_for_rounds() -> None:
    from schemes.swords.pipeline import CandidateProgress, refresh_moves
    from schemes.swords.pipeline import labels_missing as missing

    rule = StoppingRule(CURTAIL, maximum=10)

    def candidate(pk: int, stage: str, accepts: int, labels: int) -> CandidateProgress:
        return CandidateProgress(pk, stage, labels, accepts, labels, accepts, "roget")

    # Target 1 leaves step 2 with 3 rejects (undecided: goes on), 3 accepts (goes on) and, imported,
    # 10 rejects (decided inconceivable: dropped). Target 2 is in step 3 with 1 accept of 6 (decided)
    # and 6 accepts of 6 (decided): done. Target 3 is in step 3 with 2 accepts of 4 (undecided).
    progress = {
        1: [candidate(11, "reduce", 0, 3), candidate(12, "reduce", 3, 3), candidate(13, "reduce", 0, 10)],
        2: [candidate(21, "score", 1, 6), candidate(22, "score", 6, 6)],
        3: [candidate(31, "score", 2, 4), candidate(32, "dropped", 0, 3)],
    }
    moves = refresh_moves(
        {1: "reduce", 2: "score", 3: "score"},
        progress,
        step2_labels=3,
        step3_labels=7,
        pass_min_accepts=1,
        rule=rule,
    )
    moved = {(move.what, move.old, move.new): set(move.ids) for move in moves.moves}
    assert moved[("candidate", "reduce", "score")] == {11, 12}
    assert moved[("candidate", "reduce", "dropped")] == {13}
    assert moves.advanced == [1] and moves.done == [2]
    assert moved[("candidate", "score", "final")] == {21, 22}
    # Targets 1 and 3 get their next rounds: 3 labels each for 11 and 12 (see above), 3 for 31
    # (2 of 4: three rejects reach 5 non-accepts with an accept); none for the dropped 32.
    assert moves.followup == [1, 3]
    assert [missing(c, step=3, step2_labels=3, step3_labels=7, rule=rule) for c in progress[3]] == [3, 0]
    assert not moves.reopened


def two_humps() -> MixturePrior:
    """Half the candidates at a share of 0.005 (the grid's first point), half at 0.995 (its last)."""
    weights = [0.0] * len(GRID)
    weights[0] = weights[-1] = 0.5
    return MixturePrior(tuple(weights))


def test_a_mixture_prior_weighs_its_humps_by_the_labels_so_far() -> None:
    prior = two_humps()
    # Hand-worked: after 0 of 2 the low hump weighs 0.995^2 against 0.005^2; the conceivable decision
    # changes if any of the 8 to come is an accept, the acceptable one if 6 or more are.
    low = 0.995**2 / (0.995**2 + 0.005**2)
    any_accept = 1 - (low * 0.995**8 + (1 - low) * 0.005**8)
    six_or_more = sum(
        math.comb(8, k) * (low * 0.005**k * 0.995 ** (8 - k) + (1 - low) * 0.995**k * 0.005 ** (8 - k))
        for k in range(6, 9)
    )
    acceptable, conceivable = change_probabilities(0, 2, maximum=10, prior=prior)
    assert conceivable == pytest.approx(any_accept, rel=1e-9) and conceivable == pytest.approx(0.0393, abs=1e-4)
    assert acceptable == pytest.approx(six_or_more, rel=1e-9) and acceptable < 1e-4
    # Each decision against its own epsilon: 0.039 is below 0.05 and above 0.03.
    assert adaptive_decided(0, 2, maximum=10, prior=prior, epsilon=0.01, floor=2, epsilon_conceivable=0.05)
    assert not adaptive_decided(0, 2, maximum=10, prior=prior, epsilon=0.01, floor=2, epsilon_conceivable=0.03)
    # Without a conceivable epsilon, one epsilon for a change of either decision, as under the beta prior.
    either = change_probability(0, 2, maximum=10, prior=prior)
    assert either == pytest.approx(any_accept, rel=1e-6)
    assert adaptive_decided(0, 2, maximum=10, prior=prior, epsilon=0.04, floor=2)
    assert not adaptive_decided(0, 2, maximum=10, prior=prior, epsilon=0.039, floor=2)
    # Two accepts of two put the weight on the high hump: acceptable now, and a change (three accepts
    # or fewer of the eight to come) is as unlikely as the low hump's remaining weight.
    assert change_probabilities(2, 2, maximum=10, prior=prior)[0] < 1e-4
    # One of two weighs both humps alike: the acceptable decision changes half the time.
    assert change_probabilities(1, 2, maximum=10, prior=prior)[0] == pytest.approx(0.5, abs=1e-6)


def test_a_mixture_prior_needs_enough_candidates_and_finds_where_they_lie() -> None:
    few = {(0, 3): MIN_CANDIDATES_FOR_PRIOR - 1}
    assert estimate_mixture(few) == UNIFORM_MIXTURE
    # Thirty candidates of three rejects: the weight goes to the lowest share.
    rejected = estimate_mixture({(0, 3): 30})
    assert rejected.weights[0] > 0.9 and sum(rejected.weights) == pytest.approx(1.0)
    # Half at 0 of 10, half at 10 of 10: two humps of a half at the ends.
    split = estimate_mixture({(0, 10): 20, (10, 10): 20})
    assert split.weights[0] == pytest.approx(0.5, abs=0.01) and split.weights[-1] == pytest.approx(0.5, abs=0.01)
    # A Beta read on the grid keeps its mean.
    grid_mean = sum(w * p for w, p in zip(beta_on_grid(Prior(2, 6)).weights, GRID, strict=True))
    assert grid_mean / sum(beta_on_grid(Prior(2, 6)).weights) == pytest.approx(0.25, abs=0.01)


def test_weighted_evidence_counts_each_label_by_its_worker_reliability() -> None:
    assert weighted_counts([(True, 1.0), (True, 1.0), (False, 1.0)]) == (2, 3)
    # A worker no better than chance counts for nothing; 0.9 + 0.2 of a reject round to one label.
    assert weighted_counts([(True, 1.0), (True, 0.0), (False, 0.9), (False, 0.2)]) == (1, 2)
    # Reliabilities outside [0, 1] (Youden's J of a contrarian) are clipped.
    assert weighted_counts([(True, 1.4), (False, -0.3)]) == (1, 1)
    assert weighted_counts([]) == (0, 0)


def test_a_rule_reads_a_candidates_weighted_evidence_where_it_has_one() -> None:
    from schemes.swords.pipeline import SCORE, CandidateProgress, candidate_complete, labels_missing

    rule = StoppingRule(ADAPTIVE, maximum=10, epsilon=0.05, floor=3, evidence={7: (2, 2)})
    assert rule.counts(7, 3, 3) == (2, 2) and rule.counts(8, 3, 3) == (3, 3)
    # Hand-worked (test above): 3 accepts of 3 under the uniform prior stop at 0.05, but the evidence of
    # candidate 7 is 2 of 2 (a worker of no reliability), below the floor: it asks for another label.
    weighed = CandidateProgress(7, SCORE, 3, 3, 3, accepts=3)
    plain = CandidateProgress(8, SCORE, 3, 3, 3, accepts=3)
    assert candidate_complete(plain, step2_labels=3, step3_labels=0, rule=rule)
    assert not candidate_complete(weighed, step2_labels=3, step3_labels=0, rule=rule)
    assert labels_missing(weighed, step=3, step2_labels=3, step3_labels=0, rule=rule) == 1
    # At the design's maximum of valid labels it is decided whatever the weights say.
    full = CandidateProgress(7, SCORE, 3, 3, 10, accepts=3)
    assert candidate_complete(full, step2_labels=3, step3_labels=0, rule=rule)
    assert labels_missing(full, step=3, step2_labels=3, step3_labels=0, rule=rule) == 0
