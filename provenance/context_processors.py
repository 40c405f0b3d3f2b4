from tenancy.membership import projects_for


def projects(request):
    """The projects the signed-in user may switch between, for the header."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"user_projects": []}
    return {"user_projects": projects_for(user)}
