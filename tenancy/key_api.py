"""`/api/v1/keys`: a project's API keys (admin scope only, even to list them;
a project admin's session may list them too). The use cases: tenancy/api_keys.py."""

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.openapi import BOOLEAN, DATETIME, INTEGER, STRING, array, enum, nullable, obj, ref
from tenancy import api_keys
from tenancy.models import ALL_SCOPES

SCOPES = {**array(enum(*ALL_SCOPES)), "minItems": 1,
          "description": "ingest: send events and spans, read the policy and datasets, record evaluation runs; "
                         "read: every GET; admin: everything, keys included."}
KEY = obj({
    "id": INTEGER,
    "name": STRING,
    "scopes": SCOPES,
    "prefix": {**STRING, "description": "The secret's first characters, to tell keys apart."},
    "created_at": DATETIME,
    "last_used_at": {**nullable(DATETIME), "description": "Updated at most once a minute."},
    "revoked": {**BOOLEAN, "description": "Revoked, or rotated and past its grace: its requests get 401."},
    "revoked_at": nullable(DATETIME),
    "expires_at": {**nullable(DATETIME), "description": "A rotated key works until then."},
}, required=["id", "name", "scopes", "created_at", "last_used_at", "revoked"])
ISSUED = {**KEY, "properties": {**KEY["properties"], "key": {**STRING, "description": "The secret: shown this once."}},
          "required": ["id", "name", "scopes", "key", "created_at"]}
CREATE = obj({"name": {**STRING, "minLength": 1, "maxLength": api_keys.NAME_MAX}, "scopes": SCOPES})
ROTATE = obj({"grace_seconds": {**INTEGER, "minimum": 0, "maximum": api_keys.MAX_GRACE_SECONDS,
                                "description": "How long the old secret keeps working (default 0: it stops now)."}},
             required=[])
KEY_ID = OpenApiParameter("key_id", int, OpenApiParameter.PATH, description="The key's id.",
                          examples=[OpenApiExample("a key", value=999999)])


class KeyApiView(APIView):
    admin_only = True

    def key_or_404(self, key_id):
        return get_object_or_404(api_keys.of_project(self.request.user.project), pk=key_id)


class KeyListView(KeyApiView):
    @extend_schema(operation_id="keys_list", summary="The project's API keys (never their secrets)",
                   responses={200: array(KEY)}, tags=["keys"])
    def get(self, request):
        return Response([api_keys.as_json(key) for key in api_keys.of_project(request.user.project)])

    @extend_schema(operation_id="keys_create", summary="Create an API key; its secret is answered this once",
                   request={"application/json": CREATE}, responses={201: ISSUED}, tags=["keys"],
                   examples=[OpenApiExample("an agent's key", value={"name": "support-agent", "scopes": ["ingest"]},
                                            request_only=True)])
    def post(self, request):
        data = api_keys.body_object(request.data)
        key, raw = api_keys.create(request.user.project, request.user, data.get("name"), data.get("scopes"))
        return Response(api_keys.issued_json(key, raw), status=status.HTTP_201_CREATED)


class KeyDetailView(KeyApiView):
    @extend_schema(operation_id="keys_revoke", summary="Revoke a key: its next request gets 401",
                   parameters=[KEY_ID], responses={204: OpenApiResponse(description="Revoked.")}, tags=["keys"])
    def delete(self, request, key_id):
        api_keys.revoke(self.key_or_404(key_id), request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class KeyRotateView(KeyApiView):
    @extend_schema(operation_id="keys_rotate",
                   summary="A new key with the same name and scopes; the old one works for the grace, then 401",
                   parameters=[KEY_ID], request={"application/json": ROTATE},
                   responses={201: ISSUED, 409: ref("Error")},
                   tags=["keys"])
    def post(self, request, key_id):
        data = api_keys.body_object(request.data)
        key = self.key_or_404(key_id)
        new, raw = api_keys.rotate(key, request.user, data.get("grace_seconds", 0))
        return Response({**api_keys.issued_json(new, raw), "replaces": key.pk}, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("keys", KeyListView.as_view(), name="api-keys"),
    path("keys/<int:key_id>", KeyDetailView.as_view(), name="api-key"),
    path("keys/<int:key_id>/rotate", KeyRotateView.as_view(), name="api-key-rotate"),
]
