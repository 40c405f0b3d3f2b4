"""Who is asking the API: a bearer API key (its project, what its scopes
allow) or a signed-in person's session (the read API of a project they belong
to, so the browsable API works in a browser; writes still need a key).

A key's scopes are judged before the request's body is read, for every
endpoint that takes a key (denoise_dashboard/key_scopes.py, by the rule in
tenancy/scopes.py), and again by DRF's permission below."""

from datetime import timedelta

from django.http import Http404
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions

from tenancy import scopes
from tenancy.membership import projects_for
from tenancy.models import ApiKey, hash_api_key

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
    """The active key named by an `Authorization: Bearer …` header, or None: one
    indexed lookup, never cached, so a revocation (or a rotated key's expiry)
    holds from the next request on, in every worker."""
    if not header:
        return None
    scheme, _, raw = header.partition(" ")
    if scheme.lower() != "bearer" or not raw.strip():
        return None
    key = ApiKey.objects.select_related("project").filter(key_hash=hash_api_key(raw.strip())).first()
    if key is None or not key.is_active:
        return None
    return key


def note_use(key: ApiKey) -> None:
    """Stamps the key's last use, at most once a minute, so the hot ingest path
    stays write-free here."""
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now


def key_for_request(request) -> ApiKey | None:
    """The request's active key, looked up once per request whoever asks first
    (the scope gate before the body is read, then DRF or the OTLP and
    Prometheus views); `request` is Django's (a DRF request's `_request`)."""
    header = request.META.get("HTTP_AUTHORIZATION")
    found = getattr(request, "_denoise_api_key", None)
    if found is None or found[0] != header:
        found = (header, active_key_for_bearer(header))
        request._denoise_api_key = found
    return found[1]


def check_key_scopes(request, key: ApiKey, view) -> None:
    """Raises scopes.ScopeDenied when the key may not make this request of
    `view`; else notes its use (a refused request changes nothing, not even that)."""
    scopes.check(key.scopes, view, request.method, request.path)
    note_use(key)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if not header:
            return None
        key = key_for_request(getattr(request, "_request", request))
        if key is None:
            raise exceptions.AuthenticationFailed("unknown or revoked API key")
        return ApiClient(key), key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class SessionReader:
    """A signed-in person reading one of their projects through the API.

    Stands in for the user (the browsable API asks it for a username) and
    carries the project the request reads, like an ApiClient does."""

    def __init__(self, user, project):
        self.user = user
        self.project = project
        self.scopes = scopes.SessionScopes(user, project)

    def __getattr__(self, name):
        return getattr(self.user, name)

    def __str__(self):
        return f"session:{self.user.get_username()}"


PROJECT_PARAM = "project"
SESSION_NOT_ADMIN = "only the project's admins may read this (your role in the project is not admin)"
SESSION_READ_ONLY = "a signed-in session may only read; send writes with Authorization: Bearer <api_key>"


def session_project(user, slug: str | None):
    """The project a session reads: `?project=SLUG` among the user's own, else
    the first of them by slug; None when the user belongs to none."""
    projects = projects_for(user).order_by("slug")
    if slug:
        project = projects.filter(slug=slug).first()
        if project is None:
            raise Http404
        return project
    return projects.first()


class SessionReadAuthentication(authentication.SessionAuthentication):
    """Django's session for people in a browser. Only without an Authorization
    header: a request that names a key is judged by its key alone. CSRF is
    checked as DRF does; unsafe methods are refused outright."""

    def authenticate(self, request):
        if request.META.get("HTTP_AUTHORIZATION"):
            return None
        user = getattr(request._request, "user", None)
        if user is None or not user.is_active:
            return None
        if request.method not in permissions.SAFE_METHODS:
            # Refused before CSRF is even checked: a session never writes.
            raise exceptions.PermissionDenied(SESSION_READ_ONLY)
        self.enforce_csrf(request)
        project = session_project(user, request.query_params.get(PROJECT_PARAM))
        if project is None:
            raise exceptions.PermissionDenied("you belong to no project; ask an admin to add you to one")
        return SessionReader(user, project), None

    def authenticate_header(self, request):
        # A 401 names the bearer scheme: a session never earns one.
        return None


class HasProject(permissions.BasePermission):
    """The one permission check of the API: a key within its scopes, a
    session reading within its role's (tenancy/scopes.py says what each allows)."""

    message = "an API key is required: Authorization: Bearer <api_key>"

    def has_permission(self, request, view):
        if isinstance(request.user, ApiClient):
            check_key_scopes(request, request.user.api_key, view)
            return True
        if isinstance(request.user, SessionReader):
            if request.method not in permissions.SAFE_METHODS:
                raise exceptions.PermissionDenied(SESSION_READ_ONLY)
            if scopes.needed_scope(request.user.scopes, scopes.rules_of(view), request.method):
                raise exceptions.PermissionDenied(SESSION_NOT_ADMIN)
            return True
        return False
