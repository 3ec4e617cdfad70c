"""Approve (or with --reject, reject) submitted work on Prolific, by assignment id here or submission id."""

from __future__ import annotations

from crowds.management.commands.crowd_approve import Command as CrowdApproveCommand


class Command(CrowdApproveCommand):
    help = (
        "Approve submissions on Prolific (it pays them), or reject them with --reject: Prolific requires a message of "
        "at least 100 characters (default: the batch's) and a category (the batch's, FAILED_CHECK unless published "
        "with --rejection-category). Only work Prolific has confirmed in a sync is approved."
    )
