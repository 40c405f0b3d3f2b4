from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from provenance import project_settings
from provenance.api import shapes


class ProjectView(APIView):
    """`GET/PATCH /api/v1/project`: the key's project's settings."""

    @extend_schema(operation_id="project_retrieve", summary="The project's settings", tags=["project"],
                   responses={200: shapes.PROJECT})
    def get(self, request):
        return Response(project_settings.as_dict(request.user.project))

    @extend_schema(operation_id="project_update", summary="Change the project's settings", tags=["project"],
                   request={"application/json": shapes.PROJECT_PATCH}, responses={200: shapes.PROJECT})
    def patch(self, request):
        return Response(project_settings.as_dict(project_settings.change(request.user.project, request.data, request.user)))
