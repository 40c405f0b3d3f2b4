from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo project and its traffic: the only app that may import all others."""

    name = "demo"
