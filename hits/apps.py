from django.apps import AppConfig


class HitsConfig(AppConfig):
    name = "hits"
    verbose_name = "HITs: how judgments are collected"
