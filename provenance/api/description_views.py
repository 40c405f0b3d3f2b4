"""`/api/v1/` (the API root), `/api/v1/schema` (OpenAPI 3, JSON) and
`/api/v1/docs` (Swagger UI, from our own static files, under our CSP).

They answer to an API key or a signed-in session, like the read API."""

import hashlib
from functools import cache

from django.contrib.auth.views import redirect_to_login
from django.urls import reverse
from django.utils.http import parse_etags
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.renderers import OpenApiJsonRenderer, OpenApiJsonRenderer2
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer, TemplateHTMLRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import FREE_OBJECT, STRING, obj
from tenancy.membership import projects_for

HTTP_METHODS = ("get", "post", "put", "patch", "delete")


@cache
def openapi_document() -> dict:
    """The document is the same for every caller (it describes the code), so it
    is generated once per process."""
    return SchemaGenerator().get_schema(request=None, public=True)


@cache
def openapi_etag() -> str:
    """Changes only when the code does: the docs page revalidates the document
    (about 700 kB) instead of fetching it on every visit."""
    return '"%s"' % hashlib.sha256(OpenApiJsonRenderer().render(openapi_document())).hexdigest()[:32]


def _bare(etag: str) -> str:
    # Compression makes the ETag weak (W/"…"); the document is the same either way.
    return etag.removeprefix("W/")


class SchemaView(APIView):
    """`GET /api/v1/schema`: the OpenAPI 3 document of every `/api/v1/` endpoint."""

    renderer_classes = [OpenApiJsonRenderer2, OpenApiJsonRenderer]

    @extend_schema(operation_id="schema", summary="This document (OpenAPI 3, JSON)", responses={200: FREE_OBJECT}, tags=["api"])
    def get(self, request):
        etag = openapi_etag()
        caching = {"ETag": etag, "Cache-Control": "private, no-cache"}
        if etag in {_bare(tag) for tag in parse_etags(request.headers.get("If-None-Match", ""))}:
            return Response(status=304, headers=caching)
        return Response(openapi_document(), headers=caching)


class ApiRootView(APIView):
    """Where to start: the schema, the docs page, the OTLP endpoint and every
    operation of this API."""  # the browsable API shows this text as it is

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


class DocsView(APIView):
    """`GET /api/v1/docs`: Swagger UI over the schema. People who are not signed
    in are sent to the login page first."""

    renderer_classes = [TemplateHTMLRenderer]

    @extend_schema(exclude=True)
    def get(self, request):
        # A signed-in person's pages keep their navigation here, on their first project.
        project = projects_for(request.user).order_by("slug").first() if request.user is not None else None
        return Response({"schema_url": reverse("api-schema"), "project": project}, template_name="api/docs.html")

    def handle_exception(self, exc):
        if isinstance(exc, exceptions.NotAuthenticated) and not self.request.META.get("HTTP_AUTHORIZATION"):
            return redirect_to_login(self.request.get_full_path())
        # Errors are JSON like the rest of the API, not a template that is not there.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return super().handle_exception(exc)
