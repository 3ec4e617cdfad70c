#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        execute_from_command_line(sys.argv)
        sys.stdout.flush()
    except ImproperlyConfigured as error:
        # A setting missing or wrong (no DEBUG=1 nor SECRET_KEY, say), for any command and for --help:
        # one line that says what to set, not a traceback.
        sys.exit(f"manage.py: {error}")
    except BrokenPipeError:
        # The reader left (``--output - | head``): nothing more to say to it. Python would report the
        # pipe again when it flushes stdout at exit, so stdout goes to /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(141)


if __name__ == "__main__":
    main()
