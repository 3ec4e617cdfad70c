from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "HITs: how judgments are collected"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from hits.signin import remember_sign_in

        user_logged_in.connect(remember_sign_in, dispatch_uid="hits.remember_sign_in")
