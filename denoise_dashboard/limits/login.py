"""Sign-in throttling for `/login/` and `/admin/login/`.

LOGIN_FAILURE_LIMIT failed sign-ins within LOGIN_FAILURE_WINDOW seconds, for one
username or from one address, lock that username or address for the window:
every sign-in through it (the right password too) gets a "try again in N
minutes" page (429) until the lock runs out.
"""

import math
import unicodedata
from functools import wraps

from django.conf import settings
from django.shortcuts import render

from core.limits import store


def throttled(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method != "POST":
            return view(request, *args, **kwargs)
        names = lock_names(request)
        locked = max(store.held_for(f"login-locked:{name}") for name in names)
        if locked:
            return locked_page(request, locked)
        response = view(request, *args, **kwargs)
        if response.status_code == 200:  # the form again: the credentials were refused
            locked = record_failure(names)
            if locked:
                return locked_page(request, locked)
        return response

    return wrapper


def lock_names(request) -> list[str]:
    # Django's sign-in form NFKC-normalises the username before it checks the
    # password, so "ｍｉａ" signs in as "mia": the lock must count them as one name.
    raw = request.POST.get("username") or ""
    username = unicodedata.normalize("NFKC", raw).strip().casefold()[:150]
    names = [f"address:{request.META.get('REMOTE_ADDR', '')}"]
    if username:
        names.append(f"user:{username}")
    return names


def record_failure(names: list[str]) -> float:
    window = settings.LOGIN_FAILURE_WINDOW
    locked = 0.0
    for name in names:
        if store.take(f"login-failures:{name}", settings.LOGIN_FAILURE_LIMIT, window).remaining == 0:
            store.hold(f"login-locked:{name}", window)
            locked = float(window)
    return locked


def locked_page(request, seconds: float):
    minutes = max(1, math.ceil(seconds / 60))
    response = render(request, "registration/locked.html", {"minutes": minutes}, status=429)
    response["Retry-After"] = str(max(1, math.ceil(seconds)))
    return response
