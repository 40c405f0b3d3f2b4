from django.apps import AppConfig


class TenancyConfig(AppConfig):
    name = "tenancy"
    verbose_name = "Projects and keys"

    def ready(self):
        # Registers the OpenAPI extensions (bearer key, session) before any schema is generated.
        from tenancy import openapi  # noqa: F401
