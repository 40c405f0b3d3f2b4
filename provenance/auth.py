"""Bearer API keys: each key belongs to one project and only ever sees it."""

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from provenance.models import ApiKey, hash_api_key

LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiClient:
    """The principal behind an API key: not a user, but a project."""

    is_authenticated = True
    is_anonymous = False
    is_staff = False

    def __init__(self, api_key: ApiKey):
        self.api_key = api_key
        self.project = api_key.project

    def __str__(self):
        return f"api-key:{self.api_key.prefix}"


def active_key_for_bearer(header: str | None) -> ApiKey | None:
    """The active key named by an `Authorization: Bearer …` header, or None."""
    if not header:
        return None
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return None
    key = (
        ApiKey.objects.select_related("project")
        .filter(key_hash=hash_api_key(raw.strip()), revoked_at__isnull=True)
        .first()
    )
    if key is None:
        return None
    now = timezone.now()
    # Written at most once a minute, so the hot ingest path stays write-free here.
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if not header:
            return None
        key = active_key_for_bearer(header)
        if key is None:
            raise exceptions.AuthenticationFailed("unknown or revoked API key")
        return ApiClient(key), key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class HasProject(permissions.BasePermission):
    message = "an API key is required: Authorization: Bearer <api_key>"

    def has_permission(self, request, view):
        return isinstance(request.user, ApiClient)
