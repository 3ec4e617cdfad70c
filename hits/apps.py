from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "HITs: how judgments are collected"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from annotation.changes import register_worker_targets
        from hits import tasks, warmers  # noqa: F401  (tasks named in every process; figures warmed: annotation.warm)
        from hits.selectors.researcher import targets_worked_by
        from hits.signin import remember_sign_in

        # The figures kept per target find what a submit changed through it (docs/design.md §7).
        register_worker_targets(targets_worked_by)

        user_logged_in.connect(remember_sign_in, dispatch_uid="hits.remember_sign_in")
