"""`GET /api/v1/audit`: the project's audit log, newest first, for admins."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import invalid_body
from core.openapi import DATETIME, FREE_OBJECT, STRING, array, enum, obj
from core.paging import PAGE_PARAMETERS, page
from tenancy import audit_log

AUDIT_ENTRY = obj({
    "id": {"type": "integer"},
    "at": DATETIME,
    "actor": {**STRING, "description": "Who: `user:NAME`, `key:PREFIX… (NAME)`, or `system` for a job."},
    "actor_type": enum("person", "key", "system"),
    "action": {**STRING, "description": "`<object>.<verb>`, e.g. `alert_rule.update`, `policy.update`."},
    "object": {**STRING, "description": "What it happened to, in words."},
    "object_type": STRING,
    "object_id": STRING,
    "detail": {**FREE_OBJECT, "description": 'What changed: `{"changed": {field: {"before": old, "after": new}}}`, '
                                             "only the fields that changed, plus what the action adds."},
}, required=["at", "actor", "action", "object", "detail"])


class AuditLogView(APIView):
    # Read by the one scope check (tenancy/scopes.py): only a key with the admin
    # scope, or the session of a project admin.
    admin_only = True

    @extend_schema(operation_id="audit_list", summary="The audit log, newest first (admin)",
                   description="Changes to keys, members, roles, alert rules, destinations, silences, the fuse "
                               "policy, datasets and project settings: who (a person or a key), when, what, and "
                               "the fields that changed.",
                   parameters=[audit_log.AuditFilters, *PAGE_PARAMETERS],
                   responses={200: array(AUDIT_ENTRY)}, tags=["project"])
    def get(self, request):
        project = request.user.project
        filters = audit_log.AuditFilters(data=request.query_params)
        if not filters.is_valid():
            return Response(invalid_body(filters.errors), status=status.HTTP_400_BAD_REQUEST)
        found, headers = page(request, audit_log.entries(project, filters.validated_data))
        return Response([audit_log.entry_json(entry) for entry in found], headers=headers)
