from rest_framework.response import Response
from rest_framework.views import APIView

from provenance import project_settings
from provenance.api.errors import error_response


class ProjectView(APIView):
    """`GET/PATCH /api/v1/project`: the key's project's settings."""

    def get(self, request):
        return Response(project_settings.as_dict(request.user.project))

    def patch(self, request):
        try:
            project = project_settings.change(request.user.project, request.data)
        except project_settings.SettingsError as error:
            return error_response(f"invalid settings: {error}", 400, fields=error.fields)
        return Response(project_settings.as_dict(project))
