from django.apps import AppConfig


class CrowdsConfig(AppConfig):
    name = "crowds"
    verbose_name = "Crowds: where work is published and how it is paid"

    def ready(self) -> None:
        from annotation.models import worker_kind_offer
        from crowds import tasks  # noqa: F401  (its tasks' names are known in every process)
        from crowds.interface import backends

        # Workers of every crowd may be recorded (``Worker.kind``).
        for backend in backends():
            if backend.worker_kind:
                worker_kind_offer(kind=backend.worker_kind, label=backend.worker_label)
