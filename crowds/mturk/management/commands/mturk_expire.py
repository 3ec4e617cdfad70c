"""Expire a batch's HITs on MTurk now and close the batch."""

from __future__ import annotations

from crowds.management.commands.crowd_expire import Command as CrowdExpireCommand


class Command(CrowdExpireCommand):
    help = "Expire every MTurk HIT of a batch now (accepted work may still be submitted) and close the batch."
