"""Message every worker who submitted work in a batch (MTurk notify_workers)."""

from __future__ import annotations

from crowds.management.commands.crowd_notify import Command as CrowdNotifyCommand


class Command(CrowdNotifyCommand):
    help = "Send a message to every worker who submitted work in a batch (MTurk notify_workers)."
