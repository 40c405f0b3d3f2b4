from django.apps import AppConfig


class ProvenanceConfig(AppConfig):
    name = "provenance"
    verbose_name = "Provenance"

    def ready(self):
        # Registers the OpenAPI extensions (bearer key, session) before any schema is generated.
        from provenance.api import openapi  # noqa: F401
