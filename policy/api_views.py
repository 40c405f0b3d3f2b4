"""`/api/v1/policy`, its versions and rollback: validate, call policy.store, answer (policy.api_json)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import error_response
from core.openapi import ref
from policy import api_json, store
from policy import api_shapes as shapes
from policy.conditional import match_fails, none_match
from policy.document import PolicyError, parse_document
from tenancy.scopes import AGENT_READS


def with_etag(response: Response, etag: str) -> Response:
    response["ETag"] = etag
    # Agents may keep a copy, but ask again (conditionally) before trusting it.
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization"
    return response


def api_key_label(request) -> str:
    key = request.user.api_key
    return f"API key {key.prefix}… ({key.name})"


def policy_response(policy: store.Policy, status_code: int = status.HTTP_200_OK) -> Response:
    return with_etag(Response(api_json.policy_json(policy), status=status_code), policy.etag)


class PolicyView(APIView):
    ingest_methods = AGENT_READS

    @extend_schema(
        operation_id="policy_retrieve", summary="The fuse policy agents read", tags=["policy"],
        parameters=[OpenApiParameter("If-None-Match", OpenApiTypes.STR, OpenApiParameter.HEADER,
                                     description="The ETag you hold: 304 with no body while it is current.")],
        responses={200: OpenApiResponse(shapes.POLICY, description="The policy, with its `ETag`."),
                   304: OpenApiResponse(description="Not modified.")},
    )
    def get(self, request):
        project = request.user.project
        conditional = request.META.get("HTTP_IF_NONE_MATCH")
        if conditional:
            # The cheap path agents poll: one index probe, no document read.
            etag = store.etag_for(store.current_version(project))
            if none_match(conditional, etag):
                return with_etag(Response(status=status.HTTP_304_NOT_MODIFIED), etag)
        return policy_response(store.current(project))

    @extend_schema(
        operation_id="policy_replace", summary="Replace the policy (a new version)", tags=["policy"],
        parameters=[OpenApiParameter("If-Match", OpenApiTypes.STR, OpenApiParameter.HEADER,
                                     description="Refuse (412) if the policy changed since this ETag.")],
        request={"application/json": shapes.POLICY_PUT},
        responses={200: shapes.POLICY, 412: ref("Error")},
    )
    def put(self, request):
        project = request.user.project
        profiles, note = parse_document(request.data)
        expected = request.META.get("HTTP_IF_MATCH")
        if expected and match_fails(expected, store.etag_for(store.current_version(project))):
            return error_response("the policy changed since you read it (If-Match does not match its ETag)",
                                  status.HTTP_412_PRECONDITION_FAILED)
        return policy_response(store.replace(project, profiles, note, api_key_label(request), actor=request.user))


class PolicyVersionsView(APIView):
    """Every version, newest first (a plain list; version 0 is the built-in default)."""

    @extend_schema(operation_id="policy_versions", summary="Every version, newest first", tags=["policy"],
                   responses={200: shapes.VERSIONS})
    def get(self, request):
        return Response([api_json.version_json(p) for p in store.history(request.user.project)])


class PolicyRollbackView(APIView):
    @extend_schema(operation_id="policy_rollback", summary="A new version equal to an old one", tags=["policy"],
                   request={"application/json": shapes.ROLLBACK}, responses={200: shapes.POLICY})
    def post(self, request):
        data = request.data
        if not isinstance(data, dict) or "version" not in data:
            raise PolicyError({"version": "required: the version to roll back to"})
        unknown = sorted(set(data) - {"version", "note"})
        if unknown:
            raise PolicyError({key: "unknown key; expected one of: version, note" for key in unknown})
        note = "" if data.get("note") is None else data["note"]
        if not isinstance(note, str):
            raise PolicyError({"note": "must be a string"})
        return policy_response(store.rollback(request.user.project, data["version"], api_key_label(request), note.strip(),
                                              actor=request.user))
