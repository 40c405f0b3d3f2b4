"""What an API key's scopes allow (the contract's "Scopes"), written once.

- `admin` may do everything;
- `read` may make every safe-method request (GET, HEAD, OPTIONS), except to
  an endpoint that says `admin_only = True` (the keys and the audit log);
- `ingest` may make the requests whose method is in the endpoint's
  `ingest_methods` (what an agent needs: sending events and spans, reading the
  policy and datasets, recording evaluation runs).

An endpoint declares both as attributes of its view (a DRF view's class, or a
plain view function through `scoped`); nothing else needs listing. A signed-in
person's session gets scopes from their role (`session_scopes`): every member
reads, a project admin also reads what is admin-only (sessions never write
through the API: tenancy/auth.py refuses that first)."""

from core.errors import ApiError
from tenancy.membership import role_of
from tenancy.models import Role, Scope

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# The usual values of a view's `ingest_methods`.
AGENT_READS = frozenset({"GET", "HEAD"})
AGENT_WRITES = frozenset({"POST"})
INGEST, READ, ADMIN = Scope.INGEST.value, Scope.READ.value, Scope.ADMIN.value


class ScopeDenied(ApiError):
    """A request outside its key's (or session's) scopes: 403, nothing read or written."""

    status = 403

    def __init__(self, needed: str, method: str, path: str):
        super().__init__(f'{method} {path} needs an API key with the "{needed}" scope (or "admin"); '
                         f"nothing was read or stored")
        self.needed = needed

    def body(self) -> dict:
        return {**super().body(), "required_scope": self.needed}


def scoped(*, ingest_methods: frozenset[str] = frozenset(), admin_only: bool = False):
    """Declares a plain view function's scopes, as a DRF view's class attributes do."""

    def declare(view):
        view.ingest_methods = frozenset(ingest_methods)
        view.admin_only = admin_only
        return view

    return declare


def rules_of(view):
    """What declares an endpoint's scopes: the view class behind `as_view()`, else the function."""
    return getattr(view, "view_class", None) or getattr(view, "cls", None) or view


def accepted_scopes(view, method: str) -> tuple[str, ...]:
    """The scopes any one of which allows `method` on `view`, the narrowest first."""
    if getattr(view, "admin_only", False):
        return (ADMIN,)
    accepted = []
    if method.upper() in getattr(view, "ingest_methods", frozenset()):
        accepted.append(INGEST)
    if method.upper() in SAFE_METHODS:
        accepted.append(READ)
    accepted.append(ADMIN)
    return tuple(accepted)


def needed_scope(scopes, view, method: str) -> str | None:
    """None when `scopes` allow the request, else the narrowest scope that would.
    `scopes` is anything with `in` (checked narrowest first, so a session's
    lazy role lookup happens only for admin-only reads)."""
    accepted = accepted_scopes(view, method)
    if any(scope in scopes for scope in accepted):
        return None
    return accepted[0]


def check(scopes, view, method: str, path: str) -> None:
    """Raises ScopeDenied when `scopes` do not allow the request."""
    needed = needed_scope(scopes, rules_of(view), method)
    if needed is not None:
        raise ScopeDenied(needed, method, path)


class SessionScopes:
    """A session's scopes, from the person's role in the project: looked up
    only when asked for `admin` (one query, at most once per request)."""

    def __init__(self, user, project):
        self.user, self.project = user, project
        self._admin: bool | None = None

    def __contains__(self, scope: str) -> bool:
        if scope == READ:
            return True
        if scope == ADMIN:
            if self._admin is None:
                self._admin = role_of(self.user, self.project) == Role.ADMIN.value
            return self._admin
        return False
