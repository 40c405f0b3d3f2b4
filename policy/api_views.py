"""`/api/v1/policy`, its versions and rollback: validate, call policy.store, answer."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from policy import store
from policy.conditional import match_fails, none_match
from policy.document import PolicyError, parse_document
from provenance.api.errors import error_response


def invalid(error: PolicyError) -> Response:
    return error_response(str(error), status.HTTP_400_BAD_REQUEST, fields=error.fields)


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
    return with_etag(Response(policy.as_json(), status=status_code), policy.etag)


class PolicyView(APIView):
    def get(self, request):
        project = request.user.project
        conditional = request.META.get("HTTP_IF_NONE_MATCH")
        if conditional:
            # The cheap path agents poll: one index probe, no document read.
            etag = store.etag_for(store.current_version(project))
            if none_match(conditional, etag):
                return with_etag(Response(status=status.HTTP_304_NOT_MODIFIED), etag)
        return policy_response(store.current(project))

    def put(self, request):
        project = request.user.project
        try:
            profiles, note = parse_document(request.data)
        except PolicyError as error:
            return invalid(error)
        expected = request.META.get("HTTP_IF_MATCH")
        if expected and match_fails(expected, store.etag_for(store.current_version(project))):
            return error_response("the policy changed since you read it (If-Match does not match its ETag)",
                                  status.HTTP_412_PRECONDITION_FAILED)
        return policy_response(store.replace(project, profiles, note, api_key_label(request)))


def version_json(policy: store.Policy) -> dict:
    return {"version": policy.version, "updated_at": policy.updated_at, "note": policy.note,
            "changed_by": policy.changed_by, "source": policy.source,
            "rolled_back_from": policy.rolled_back_from}


class PolicyVersionsView(APIView):
    """Every version, newest first (a plain list; version 0 is the built-in default)."""

    def get(self, request):
        return Response([version_json(p) for p in store.history(request.user.project)])


class PolicyRollbackView(APIView):
    def post(self, request):
        data = request.data
        if not isinstance(data, dict) or "version" not in data:
            return invalid(PolicyError({"version": "required: the version to roll back to"}))
        unknown = sorted(set(data) - {"version", "note"})
        if unknown:
            return invalid(PolicyError({key: "unknown key; expected one of: version, note" for key in unknown}))
        note = data.get("note") or ""
        if not isinstance(note, str):
            return invalid(PolicyError({"note": "must be a string"}))
        try:
            policy = store.rollback(request.user.project, data["version"], api_key_label(request), note.strip())
        except PolicyError as error:
            return invalid(error)
        return policy_response(policy)
