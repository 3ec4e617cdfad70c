from django.apps import AppConfig


class CrowdsConfig(AppConfig):
    name = "crowds"
    verbose_name = "Crowds: where work is published and how it is paid"
