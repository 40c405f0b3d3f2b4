"""Sessions end after SESSION_IDLE_MINUTES without a request, and a person can
end all of theirs at once.

The idle clock is a time kept in the session, moved on at most once a minute
(so a page view is not a session write each time); the session's own expiry
(SESSION_COOKIE_AGE, the same length) is renewed with it, so the database
forgets idle sessions too. A session signed in before the clock existed
counts from the person's last sign-in."""

import time

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import SESSION_KEY, logout
from django.contrib.sessions.models import Session
from django.utils import timezone

SEEN = "_seen"
SEEN_RESOLUTION = 60


def idle_limit() -> int:
    return settings.SESSION_IDLE_MINUTES * 60


class IdleSessionMiddleware:
    """After AuthenticationMiddleware: signs out a session idle too long (the
    request goes on as anonymous, so a page answers with the sign-in)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        session = request.session
        if SESSION_KEY in session:
            now = time.time()
            seen = session.get(SEEN) or _signed_in_at(request.user)
            if seen is None:
                session[SEEN] = seen = now
            if now - seen > idle_limit():
                logout(request)
                messages.info(request, f"You were signed out after {settings.SESSION_IDLE_MINUTES} minutes "
                                       f"without activity; sign in again.")
            elif now - seen >= SEEN_RESOLUTION:
                session[SEEN] = now
        return self.get_response(request)


def _signed_in_at(user) -> float | None:
    last = getattr(user, "last_login", None)
    return last.timestamp() if last is not None else None


def end_every_session(user) -> int:
    """Deletes every session signed in as `user` (every browser, this one
    too); returns how many. Sessions live in the database (the default
    backend); only unexpired ones are read, and idle ones expire."""
    mine = [session.pk for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
            if session.get_decoded().get(SESSION_KEY) == str(user.pk)]
    Session.objects.filter(pk__in=mine).delete()
    return len(mine)
