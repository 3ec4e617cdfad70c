"""Sync Prolific studies: confirm submissions, approve or reject by policy, bonuses, returns, places."""

from __future__ import annotations

from crowds.management.commands.crowd_sync import Command as CrowdSyncCommand
from crowds.prolific.backend import ProlificBackend


class Command(CrowdSyncCommand):
    help = (
        "Sync the given batches (default: every published Prolific batch that is open or has work awaiting a "
        "decision): list the study's submissions, confirm the work saved here against them, end the claims of "
        "returned and timed-out submissions, approve valid work, approve or reject filtered work by the batch's "
        "policy, resend pending bonuses, add places to re-collect HITs that lost work."
    )

    nothing_to_sync = "No published Prolific batch to sync."

    crowd = ProlificBackend.name
