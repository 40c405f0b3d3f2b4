from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "alerts"

    def ready(self):
        from alerts.overview import recent_alerts
        from alerts.watchdog import overview_rows
        from metrics import overview_panels

        overview_panels.register("recent_alerts", recent_alerts)
        overview_panels.register("checks_not_running", overview_rows)
