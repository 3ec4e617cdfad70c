"""Sync crowd batches (every crowd's, as the beat task does): MTurk's name for crowd_sync."""

from __future__ import annotations

from crowds.management.commands.crowd_sync import Command as CrowdSyncCommand


class Command(CrowdSyncCommand):
    help = (
        "Sync the given batches (default: every published crowd batch that is open or has work awaiting a "
        "decision, MTurk's and the others'): list assignments on MTurk, flag unknown ones, approve valid work, "
        "approve or reject filtered work by the batch's policy, resend pending bonuses, block blocked workers, "
        "re-collect filtered HITs."
    )
    nothing_to_sync = "No published MTurk batch to sync."
