"""How the API's two ways in appear in the OpenAPI document (the document
itself: core/openapi.py). Registered when tenancy loads (TenancyConfig.ready)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerKeyScheme(OpenApiAuthenticationExtension):
    target_class = "tenancy.auth.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A project's API key (`manage.py create_project SLUG --json` prints one). "
                           "It reads and writes that project only, within its scopes: `ingest` (ingest, OTLP, "
                           "the policy, recording evaluation runs, reading truth sets), `read` (every GET), "
                           "`admin` (everything, keys included). Outside them: 403 naming `required_scope`.",
        }


class SessionReadScheme(OpenApiAuthenticationExtension):
    target_class = "tenancy.auth.SessionReadAuthentication"
    name = "session"
    priority = 1

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "cookie",
            "name": "sessionid",
            "description": "A signed-in person's session: GET only, for the projects they belong to "
                           "(`?project=SLUG` picks one; default: the first by slug); the admin-only reads (keys, audit) "
                           "for a project admin only. Writes need an API key.",
        }
