"""System checks for a misconfigured installation, run by `check`, `migrate` and `serve`.

As healthchecks does in hc/api/apps.py: say at start-up what would otherwise
surface as a confusing failure much later.
"""

from django.conf import settings
from django.core.checks import Error, Tags, Warning, register

from denoise_dashboard.secret_key import DEVELOPMENT_SECRET_KEY, uses_local_key

LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1", "testserver"}


@register()
def development_secret_key_in_production(app_configs, **kwargs):
    # settings.py refuses this at import; this catches settings overridden elsewhere.
    if not settings.DEBUG and settings.SECRET_KEY == DEVELOPMENT_SECRET_KEY:
        return [Error("SECRET_KEY is the development key while DEBUG is off",
                      hint="Set SECRET_KEY to a long random value.", id="denoise.E001")]
    return []


@register()
def debug_on_a_public_host(app_configs, **kwargs):
    if not settings.DEBUG:
        return []
    public = [host for host in settings.ALLOWED_HOSTS if host not in LOCAL_HOSTS and not host.endswith(".localhost")]
    if public:
        return [Warning(f"DEBUG is on while ALLOWED_HOSTS serves {', '.join(public)}",
                        hint="Debug pages show settings and source to anyone who reaches them: unset DEBUG.",
                        id="denoise.W001")]
    return []


@register()
def redis_reachable(app_configs, **kwargs):
    if not settings.REDIS_URL:
        return []
    import redis

    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2).ping()
    except (redis.RedisError, OSError, ValueError) as error:
        return [Error(f"REDIS_URL is set but Redis does not answer: {error}",
                      hint="Start Redis, correct REDIS_URL, or unset it to run on the embedded default.",
                      id="denoise.E002")]
    return []


@register(Tags.security, deploy=True)
def generated_secret_key(app_configs, **kwargs):
    if uses_local_key(settings):
        return [Warning("SECRET_KEY is not set: this instance uses the key it generated in var/",
                        hint="Set SECRET_KEY, the same on every instance, so sessions work across them.",
                        id="denoise.W002")]
    return []
