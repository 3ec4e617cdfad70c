"""Benchmarks of the platform (``python -m bench`` lists them); not tests."""

import os


def django_setup() -> None:
    """Django in this process, with the development settings unless the environment says otherwise
    (DEBUG is off unless set, and then a SECRET_KEY is required)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crowdlex.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
