from django.apps import AppConfig


class ProlificConfig(AppConfig):
    """Prolific's package as an app of its own, so that its commands are found (``prolific_publish``...)."""

    name = "crowds.prolific"
    label = "crowds_prolific"
    verbose_name = "Prolific"
