"""Block an MTurk worker here and on MTurk (create_worker_block)."""

from __future__ import annotations

from crowds.management.commands.crowd_block import Command as CrowdBlockCommand
from crowds.mturk.backend import MTurkBackend


class Command(CrowdBlockCommand):
    help = (
        "Block an MTurk worker (by WorkerId) here and on MTurk, with a reason for your records "
        "(MTurk does not show it to the worker)."
    )
    crowd = MTurkBackend.name
