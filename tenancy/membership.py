"""Who may see which project in the pages, and with which role: members see
theirs, staff see all (as admins). A change a page makes needs a role
(`changes_need`); a refusal says in plain words who the person is in the
project and whom to ask."""

from functools import wraps

from django.http import Http404
from django.shortcuts import get_object_or_404, render

from tenancy.models import ROLE_ORDER, Membership, Project, Role

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
ADMINS_NAMED = 5


def projects_for(user):
    # An API request's principal: a session reader stands for its user; a key is no user.
    user = getattr(user, "user", user)
    if not user.is_authenticated or getattr(user, "pk", None) is None:
        return Project.objects.none()
    if user.is_staff:
        return Project.objects.all()
    return Project.objects.filter(members=user)


def project_for_user_or_404(user, slug: str) -> Project:
    project = get_object_or_404(projects_for(user), slug=slug)
    if project is None:
        raise Http404
    return project


def role_of(user, project: Project) -> str | None:
    """The person's role in the project: staff are admins of every project;
    None for someone who is not a member. (A session reader stands for its user.)"""
    user = getattr(user, "user", user)
    if not getattr(user, "is_authenticated", False) or getattr(user, "pk", None) is None:
        return None
    if user.is_staff or user.is_superuser:
        return Role.ADMIN.value
    return Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()


def at_least(role: str | None, needed: str) -> bool:
    return role is not None and ROLE_ORDER.index(role) >= ROLE_ORDER.index(needed)


def has_role(user, project: Project, needed: str) -> bool:
    """Whether the person's role in the project is `needed` or above it."""
    return at_least(role_of(user, project), needed)


def role_in(request, project: Project) -> str | None:
    """`role_of` for the request's user, asked of the database once per request
    and project (a page asks it for every form it shows)."""
    known = request.__dict__.setdefault("_project_roles", {})
    if project.pk not in known:
        known[project.pk] = role_of(request.user, project)
    return known[project.pk]


def may(request, project: Project, needed: str) -> bool:
    return at_least(role_in(request, project), needed)


def article(role: str) -> str:
    return "an" if role[0] in "aeiou" else "a"


def refusal(role: str | None, project: Project, needed: str) -> str:
    """Why a person may not change something, in plain words."""
    you_are = f"You are {article(role)} {role} in {project.slug}" if role else f"You are not a member of {project.slug}"
    return f"{you_are}; ask an admin to make you {article(needed)} {needed}."


def read_only_reason(role: str | None, project: Project, needed: str) -> str:
    """What a page says beside a form its reader may not use."""
    return (f"Read-only: changing this needs {article(needed)} {needed}. "
            + refusal(role, project, needed))


def admins_of(project: Project) -> list[str]:
    return list(Membership.objects.filter(project=project, role=Role.ADMIN)
                .order_by("user__username").values_list("user__username", flat=True)[:ADMINS_NAMED])


def refused(request, project: Project, needed: str):
    """The 403 page: who the person is here, what the change needs, whom to ask."""
    role = role_in(request, project)
    return render(request, "tenancy/refused.html", {
        "project": project, "reason": refusal(role, project, needed), "role": role, "needed": needed,
        "admins": admins_of(project),
    }, status=403)


def changes_need(needed: str, *, reading_too: bool = False):
    """For a page view under a project (`slug`): a request that changes
    something (any method but GET/HEAD/OPTIONS) needs `needed` or above,
    checked before the view reads the form; reading stays open to every
    member unless `reading_too` (a page only admins may read). Someone
    outside the project gets its 404, as for reading."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if reading_too or request.method not in SAFE_METHODS:
                project = project_for_user_or_404(request.user, kwargs["slug"])
                if not may(request, project, needed):
                    return refused(request, project, needed)
            return view(request, *args, **kwargs)

        wrapped.changes_need = needed
        if reading_too:
            wrapped.reading_needs = needed
        return wrapped

    return decorator
