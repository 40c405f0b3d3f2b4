from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from policy import store
from provenance.membership import project_for_user_or_404


@login_required
def policy_page(request, slug):
    project = project_for_user_or_404(request.user, slug)
    return render(request, "policy/policy.html", {"project": project, "policy": store.current(project)})
