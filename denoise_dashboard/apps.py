from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "denoise_dashboard"
    verbose_name = "Denoise Dashboard"

    def ready(self):
        from denoise_dashboard import checks  # noqa: F401  (registers the system checks)
