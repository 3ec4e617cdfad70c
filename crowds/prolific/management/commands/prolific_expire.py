"""Stop a batch's Prolific study now and close the batch."""

from __future__ import annotations

from crowds.management.commands.crowd_expire import Command as CrowdExpireCommand


class Command(CrowdExpireCommand):
    help = "Stop a batch's Prolific study now (work handed in may still be reviewed and paid) and close the batch."
