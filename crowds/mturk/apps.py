from django.apps import AppConfig


class MTurkConfig(AppConfig):
    """MTurk's package as an app of its own, so that its commands are found (``mturk_publish``...)."""

    name = "crowds.mturk"
    label = "crowds_mturk"
    verbose_name = "Amazon Mechanical Turk"
