"""Make annotators' accounts, one or a CSV file of them (all or none), and print or e-mail each one's
one-time sign-in link (docs/people.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.importers.errors import ImportFailed
from hits.people import annotator_create, annotators_import, person_signin_link
from hits.people.services import PersonInvalid


class Command(BaseCommand):
    help = (
        "Make annotators' accounts: --csv FILE (a header line naming username, email and optionally name) "
        "or --username and --email; prints each one-time sign-in link, or e-mails it with --send."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--csv", help="a CSV file of people (gzip is fine)")
        parser.add_argument("--username")
        parser.add_argument("--email")
        parser.add_argument("--name", default="")
        parser.add_argument("--send", action="store_true", help="e-mail each person their link")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["csv"] and (options["username"] or options["email"]):
            raise CommandError("give --csv or --username with --email, not both")
        try:
            if options["csv"]:
                path = Path(options["csv"])
                if not path.is_file():
                    raise CommandError(f"{path}: no such file")
                with path.open("rb") as upload:
                    people = annotators_import(upload=upload, file=path.name)
            elif options["username"] and options["email"]:
                people = [annotator_create(username=options["username"], email=options["email"], name=options["name"])]
            else:
                raise CommandError("give --csv FILE, or --username and --email")
        except ImportFailed as error:
            raise CommandError(f"no account made: {error}") from error
        except PersonInvalid as error:
            raise CommandError(f"no account made: {error.field}: {error}") from error
        for person in people:
            link = person_signin_link(person=person, send=options["send"])
            self.stdout.write(f"{person.username}\t{'e-mailed' if link.emailed else link.url}")
        self.stdout.write(f"{len(people)} account{'s' if len(people) != 1 else ''} made")
