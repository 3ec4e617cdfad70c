"""MTurk's fee, as published in its pricing: 20 % of every reward and bonus, 40 % for the rewards of
HITs with 10 or more assignments, and at least $0.01 per assignment or bonus."""

from decimal import Decimal

from crowds.interface.costs import FeeRule

MTURK_FEE_RATE = Decimal("0.20")
MTURK_LARGE_HIT_FEE_RATE = Decimal("0.40")
# A HIT with this many assignments or more pays the higher fee.
MTURK_LARGE_HIT_ASSIGNMENTS = 10
MTURK_MIN_FEE = Decimal("0.01")

MTURK_FEES = FeeRule(
    rate=MTURK_FEE_RATE,
    large_rate=MTURK_LARGE_HIT_FEE_RATE,
    large_from=MTURK_LARGE_HIT_ASSIGNMENTS,
    minimum=MTURK_MIN_FEE,
)
