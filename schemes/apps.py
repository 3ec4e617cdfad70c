from django.apps import AppConfig


class SchemesConfig(AppConfig):
    name = "schemes"
    verbose_name = "Annotation schemes"

    def ready(self) -> None:
        # The built-in schemes register themselves when imported.
        from schemes import generation, prolex, swords, sws  # noqa: F401
