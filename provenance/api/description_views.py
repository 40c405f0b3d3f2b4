"""`/api/v1/` (the API root), `/api/v1/schema` (OpenAPI 3, JSON) and
`/api/v1/docs` (Swagger UI, from our own static files, under our CSP).

The schema and the docs page describe the code and hold no data, so they
answer anyone, like any published API description; a key that is sent is
still checked (unknown or revoked: 401). The API root, which lists the
endpoints, answers to a key or a session like the read API."""

from functools import cache

from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2
from drf_spectacular.utils import extend_schema
from rest_framework import permissions
from rest_framework.authentication import SessionAuthentication
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer, TemplateHTMLRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from provenance.api.openapi import FREE_OBJECT, STRING, obj
from provenance.auth import ApiKeyAuthentication

HTTP_METHODS = ("get", "post", "put", "patch", "delete")


@cache
def openapi_document() -> dict:
    """The document is the same for every caller (it describes the code), so it
    is generated once per process."""
    return SchemaGenerator().get_schema(request=None, public=True)


class PublicDescription(APIView):
    """No credentials needed. A session is Django's plain one, not the read
    API's (which needs a project): a signed-in person of no project reads the
    description like anyone, and the docs page's header still shows them."""

    authentication_classes = [ApiKeyAuthentication, SessionAuthentication]
    permission_classes = [permissions.AllowAny]


class SchemaView(PublicDescription):
    """`GET /api/v1/schema`: the OpenAPI 3 document of every `/api/v1/` endpoint."""

    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer]

    @extend_schema(operation_id="schema", summary="This document (OpenAPI 3, JSON); no credentials needed",
                   responses={200: FREE_OBJECT}, tags=["api"], auth=[{"apiKey": []}, {}])
    def get(self, request):
        return Response(openapi_document())


class ApiRootView(APIView):
    """`GET /api/v1/`: where to start: the schema, the docs page, the OTLP
    endpoint and every operation of this API."""

    renderer_classes = [JSONRenderer, BrowsableAPIRenderer]

    @extend_schema(
        operation_id="api_root",
        summary="The API root",
        responses={200: obj({"schema": STRING, "docs": STRING, "otlp_traces": STRING, "endpoints": FREE_OBJECT})},
        tags=["api"],
    )
    def get(self, request):
        endpoints = {
            path: sorted(method.upper() for method in item if method in HTTP_METHODS)
            for path, item in openapi_document()["paths"].items()
        }
        return Response({
            "schema": request.build_absolute_uri(reverse("api-schema")),
            "docs": request.build_absolute_uri(reverse("api-docs")),
            "otlp_traces": request.build_absolute_uri(reverse("otlp-traces")),
            "endpoints": endpoints,
        })


class DocsView(PublicDescription):
    """`GET /api/v1/docs`: Swagger UI over the schema."""

    renderer_classes = [TemplateHTMLRenderer]

    @extend_schema(exclude=True)
    def get(self, request):
        return Response({"schema_url": reverse("api-schema")}, template_name="api/docs.html")

    def handle_exception(self, exc):
        # Errors are JSON like the rest of the API, not a template that is not there.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)
