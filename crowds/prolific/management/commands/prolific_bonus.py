"""Pay a bonus on Prolific, once per assignment and reason (set up, then paid once)."""

from __future__ import annotations

from crowds.management.commands.crowd_bonus import Command as CrowdBonusCommand


class Command(CrowdBonusCommand):
    help = (
        "Pay a bonus, once, to the participant of an assignment: "
        "prolific_bonus ASSIGNMENT 0.25 --reason 'Careful work'. "
        "Prolific's bonus-payments call sets it up, its pay call pays it; a retry never pays twice."
    )
