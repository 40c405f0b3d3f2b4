"""Rate limits on the API (contract: "Serving and limits").

Every `/api/v1/` and `/v1/traces` request counts against its API key:
API_RATE_LIMIT requests per minute (0: off). Past it the answer is 429 with
Retry-After, given before the view runs, so nothing of the request is stored.
Keys are counted by a hash of the bearer token, without a database lookup; each
key has its own counter, so one key's traffic never slows another's.

An address that keeps presenting unknown keys (API_KEY_FAILURES_PER_ADDRESS
401s within API_KEY_FAILURE_WINDOW seconds) is answered 429 for that window,
except with a key this installation has recently accepted or just issued:
guessing stops, the agents sharing that address keep working. A request that
presents no key guesses nothing: it is neither counted nor refused, and gets the
contract's 401.
"""

import random

from django.conf import settings

from core.limits import store
from denoise_dashboard.limits.answers import OTLP_PATH, refusal
from tenancy.key_limits import bearer_digest, is_known, mark_known

API_PATH = "/api/v1/"
MINUTE = 60
class ApiRateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not (request.path.startswith(API_PATH) or request.path.startswith(OTLP_PATH)):
            return self.get_response(request)
        digest = bearer_digest(request.headers.get("Authorization"))
        address = request.META.get("REMOTE_ADDR", "")

        guessing = digest and store.held_for(f"api-guessing:{address}")
        if guessing and not is_known(digest):
            return refusal(request, 429, "too many unknown API keys from this address; retry later", guessing)

        limit = settings.API_RATE_LIMIT
        budget = None
        if digest and limit:
            budget = store.take(f"api-key:{digest}", limit, MINUTE)
            if not budget.allowed:
                return refusal(request, 429, f"rate limit of {limit} requests per minute exceeded for this "
                                             f"API key; nothing was stored", budget.retry_after)

        response = self.get_response(request)
        if response.status_code == 401 and digest:
            self.count_failure(address)
        elif digest and response.status_code < 500 and (
            budget is None or budget.remaining >= limit - 1 or random.random() < 0.001
        ):
            # A key seen after a quiet spell (a full budget), and now and then a
            # busy one, is marked known: not an extra write on every request.
            mark_known(digest)
        return response

    @staticmethod
    def count_failure(address: str) -> None:
        window = settings.API_KEY_FAILURE_WINDOW
        if store.take(f"api-failures:{address}", settings.API_KEY_FAILURES_PER_ADDRESS, window).remaining == 0:
            store.hold(f"api-guessing:{address}", window)
