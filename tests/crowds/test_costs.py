"""Cost maths: MTurk's fee and the hourly wage a reward implies (no database)."""

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from crowds.interface.costs import (
    FeeRule,
    bonus_cost,
    cost_estimate,
    hourly_wage,
    median_seconds,
    reward_for_wage,
)
from crowds.mturk.fees import MTURK_FEES


def test_hits_with_ten_or_more_assignments_pay_the_higher_fee() -> None:
    assert MTURK_FEES.rate_for(3) == Decimal("0.20")
    assert MTURK_FEES.rate_for(9) == Decimal("0.20")
    assert MTURK_FEES.rate_for(10) == Decimal("0.40")


def test_the_fee_is_at_least_one_cent_per_payment() -> None:
    assert MTURK_FEES.fee(Decimal("0.01"), Decimal("0.20")) == Decimal("0.01")
    assert MTURK_FEES.fee(Decimal("0.10"), Decimal("0.20")) == Decimal("0.02")
    assert MTURK_FEES.fee(Decimal("0.10"), Decimal("0.40")) == Decimal("0.04")
    assert MTURK_FEES.fee(Decimal("0"), Decimal("0.20")) == Decimal("0")


def test_a_swords_step_two_batch_costs_twelve_cents_per_assignment() -> None:
    # 100 HITs x 3 assignments x ($0.10 + 20 %).
    estimate = cost_estimate(
        assignments_per_hit=[3] * 100, reward=Decimal("0.10"), seconds_per_assignment=24, fees=MTURK_FEES
    )
    assert (estimate.hits, estimate.assignments) == (100, 300)
    assert (estimate.rewards_total, estimate.fees_total, estimate.total) == (
        Decimal("30.00"),
        Decimal("6.00"),
        Decimal("36.00"),
    )
    assert estimate.large_hits == 0
    assert estimate.cost_per_assignment == Decimal("0.12")
    # SWORDS aimed at $15/h with $0.10 per assignment: that is 24 seconds per assignment.
    assert estimate.hourly_wage == Decimal("15.00")
    assert estimate.reward_for_target_wage == Decimal("0.10")


def test_ten_assignment_hits_pay_forty_percent() -> None:
    estimate = cost_estimate(assignments_per_hit=[10, 3], reward=Decimal("0.10"), fees=MTURK_FEES)
    assert estimate.fees_total == Decimal("0.46")  # 10 x $0.04 + 3 x $0.02
    assert estimate.large_hits == 1
    assert estimate.hourly_wage is None and estimate.reward_for_target_wage is None


def test_the_local_queue_takes_no_fee() -> None:
    estimate = cost_estimate(assignments_per_hit=[3, 3], reward=Decimal("0.10"), with_fee=False)
    assert estimate.total == Decimal("0.60") and estimate.fees_total == 0


def test_wage_and_reward_for_a_wage() -> None:
    assert hourly_wage(Decimal("0.10"), 60) == Decimal("6.00")
    assert hourly_wage(Decimal("0.10"), None) is None
    assert reward_for_wage(Decimal("15"), 60) == Decimal("0.25")
    assert reward_for_wage(Decimal("15"), 61) == Decimal("0.26")  # rounded up: never below the wage
    assert bonus_cost(Decimal("1.00"), MTURK_FEES) == Decimal("1.20")


def test_the_median_ignores_missing_times() -> None:
    assert median_seconds([None, 30.0, 10.0, 0.0, 20.0]) == 20.0
    assert median_seconds([None]) is None


@given(
    counts=st.lists(st.integers(min_value=1, max_value=20), max_size=30),
    cents=st.integers(min_value=1, max_value=500),
)
def test_the_total_is_rewards_plus_between_twenty_and_forty_percent(counts: list[int], cents: int) -> None:
    reward = Decimal(cents) / 100
    estimate = cost_estimate(assignments_per_hit=counts, reward=reward, fees=MTURK_FEES)
    assert estimate.total == estimate.rewards_total + estimate.fees_total
    assignments = sum(counts)
    assert estimate.fees_total >= Decimal("0.01") * assignments
    assert estimate.fees_total <= (reward * Decimal("0.40") + Decimal("0.01")) * assignments


@given(cents=st.integers(min_value=1, max_value=500), seconds=st.floats(min_value=1, max_value=3600, allow_nan=False))
def test_the_reward_for_a_wage_pays_at_least_that_wage(cents: int, seconds: float) -> None:
    wage = Decimal(cents) / 10
    reward = reward_for_wage(wage, seconds)
    assert reward is not None
    implied = reward * 3600 / Decimal(str(seconds))
    assert implied >= wage


def test_a_flat_service_fee_has_no_minimum_and_no_large_hit_tier() -> None:
    prolific = FeeRule(rate=Decimal("0.428"))

    assert prolific.reward_fee(Decimal("0.20"), hit_size=50) == Decimal("0.09")
    assert prolific.bonus_fee(Decimal("0.01")) == Decimal("0.00")
    estimate = cost_estimate(
        assignments_per_hit=[10, 3],
        reward=Decimal("0.20"),
        fees=prolific,
        seconds_per_assignment=90,
        minimum_hourly_wage=Decimal("8.00"),
    )
    assert (estimate.fees_total, estimate.large_hits, estimate.total) == (Decimal("1.17"), 0, Decimal("3.77"))
    assert (estimate.hourly_wage, estimate.below_minimum) == (Decimal("8.00"), False)
    assert cost_estimate(
        assignments_per_hit=[1],
        reward=Decimal("0.19"),
        seconds_per_assignment=90,
        minimum_hourly_wage=Decimal("8.00"),
        fees=MTURK_FEES,
    ).below_minimum
