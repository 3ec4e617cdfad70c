from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review: what the work is worth"

    def ready(self) -> None:
        # Registers the refresh task by name in every process, so the hits app can queue it
        # without importing this app (hits.review_queue).
        from review import tasks  # noqa: F401
