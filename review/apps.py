from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "review"
    verbose_name = "Review: what the work is worth"

    def ready(self) -> None:
        # Registers the refresh task by name in every process, so the hits app can queue it
        # without importing this app (hits.review_queue); and the pipeline's and the live poll's
        # figures to bring up to date after a change (annotation.warm).
        from review import tasks, warmers  # noqa: F401
