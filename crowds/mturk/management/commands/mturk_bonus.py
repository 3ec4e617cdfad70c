"""Send a bonus to the worker of an assignment (MTurk send_bonus with a unique token)."""

from __future__ import annotations

from crowds.management.commands.crowd_bonus import Command as CrowdBonusCommand


class Command(CrowdBonusCommand):
    help = "Pay a bonus, once, to the worker of an assignment: mturk_bonus ASSIGNMENT 0.25 --reason 'Careful work'."
