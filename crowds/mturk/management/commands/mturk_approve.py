"""Approve (or with --reject, reject) submitted MTurk assignments, by id here or by MTurk AssignmentId."""

from __future__ import annotations

from crowds.management.commands.crowd_approve import Command as CrowdApproveCommand


class Command(CrowdApproveCommand):
    help = (
        "Approve submitted assignments (MTurk pays them), or reject them with --reject. Only work MTurk has "
        "confirmed in a sync is approved; work MTurk does not know is never paid."
    )
