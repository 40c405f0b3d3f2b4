"""Settings for Denoise Dashboard.

Everything comes from environment variables through the helpers in `env.py`;
with none set, the app runs on an embedded default (SQLite, in-process channel
layer, Celery in eager mode with an in-process scheduler).
"""

from pathlib import Path

from celery.schedules import crontab
from django.utils.csp import CSP

from core.env import envbool, envdatabase, envint, envlist, envreplica, envstr, envurl
from denoise_dashboard.secret_key import secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("VAR_DIR", str(BASE_DIR / "var")))

DEBUG = envbool("DEBUG", False)
# From the environment; the development key only with DEBUG on (refused
# otherwise); else a key generated and kept in var/ (the embedded `make run`).
SECRET_KEY = secret_key(VAR_DIR, DEBUG)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])
SITE_ROOT = envstr("SITE_ROOT", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "tenancy",
    "provenance",
    "metrics",
    "alerts",
    "evals",
    "policy",
    "demo",
    "denoise_dashboard.apps.DashboardConfig",
]

MIDDLEWARE = [
    "denoise_dashboard.request_metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "denoise_dashboard.secure_cookies.SecureCookiesMiddleware",
    "denoise_dashboard.nul_guard.refuse_nul",
    # Before anything reads the body or the database: a refused request costs a counter.
    "denoise_dashboard.limits.api.ApiRateLimitMiddleware",
    # A key outside its scopes is refused before its body is read (tenancy/scopes.py).
    "denoise_dashboard.key_scopes.KeyScopeMiddleware",
    "denoise_dashboard.request_bodies.read_request_bodies",
    "denoise_dashboard.static_files.StaticFilesMiddleware",
    # Outside the outage middleware: a replica lost mid-request is answered by the primary.
    "denoise_dashboard.replica_reads.ReplicaReadsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "tenancy.people.sessions.IdleSessionMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "denoise_dashboard.outage.DatabaseOutageMiddleware",
]

ROOT_URLCONF = "denoise_dashboard.urls"
WSGI_APPLICATION = "denoise_dashboard.wsgi.application"
ASGI_APPLICATION = "denoise_dashboard.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "provenance.context_processors.projects",
            ],
        },
    },
]

DATABASES = {"default": envdatabase("DATABASE_URL", VAR_DIR / "db.sqlite3")}
# A PostgreSQL streaming replica of DATABASE_URL for pages and read API requests
# (core/replica.py, denoise_dashboard/replica_reads.py); writes stay on the primary.
DATABASE_REPLICA_URL = envstr("DATABASE_REPLICA_URL", "")
REPLICA_MAX_LAG = envint("REPLICA_MAX_LAG", 10, minimum=0)
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = {**envreplica("DATABASE_REPLICA_URL", DATABASES["default"]), "TEST": {"MIRROR": "default"}}
    DATABASE_ROUTERS = ["core.replica.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = envstr("REDIS_URL", "")
# Namespaces this installation's keys and channels in Redis, so two
# installations (or two test runs) can share one server.
REDIS_PREFIX = envstr("REDIS_PREFIX", "denoise")

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": f"{REDIS_PREFIX}:asgi"},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Celery: Redis when configured; otherwise tasks run eagerly in-process and the
# embedded scheduler (denoise_dashboard/scheduler.py) plays the part of beat.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TIMEZONE = envstr("TIME_ZONE", "UTC")
CELERY_BEAT_SCHEDULE = {
    "evaluate-alerts-every-minute": {
        "task": "alerts.tasks.evaluate_alerts",
        "schedule": 60.0,
    },
    "retry-due-deliveries": {
        "task": "alerts.tasks.retry_due_deliveries",
        "schedule": 15.0,
    },
    "check-dag-health-nightly": {
        "task": "provenance.tasks.check_dag_health",
        "schedule": crontab(hour=3, minute=0),
    },
    "apply-retention-nightly": {
        "task": "provenance.tasks.apply_retention",
        "schedule": crontab(hour=3, minute=30),
    },
    "refresh-metric-rollups": {
        "task": "metrics.tasks.refresh_rollups",
        "schedule": 30.0,
    },
    # Each ingest marks the root causes it changed and asks a worker to settle them; this finds what a
    # lost message left marked.
    "catch-up-root-causes": {
        "task": "provenance.tasks.catch_up_root_causes",
        "schedule": 60.0,
    },
}
EMBEDDED_SCHEDULER = envbool("EMBEDDED_SCHEDULER", not REDIS_URL)

# --- Serving (manage.py serve) ---
# Behind a TLS-terminating proxy: believe its X-Forwarded-Proto (secure cookies,
# HSTS) and X-Forwarded-For (the client address the throttles count) when it
# connects from one of FORWARDED_ALLOW_IPS. Off by default: a client talking to
# the server directly must not be able to claim another address.
TRUST_PROXY_HEADERS = envbool("TRUST_PROXY_HEADERS", False)
FORWARDED_ALLOW_IPS = envlist("FORWARDED_ALLOW_IPS", ["127.0.0.1", "::1"])
# No SECURE_PROXY_SSL_HEADER: Django would believe that header from any client.
# Uvicorn's proxy middleware (serving.py) sets the request's scheme from it only
# when the connection comes from FORWARDED_ALLOW_IPS, and Django reads that scheme.
SERVE_ACCESS_LOG = envbool("SERVE_ACCESS_LOG", False)

# --- HTTPS ---
# HSTS is sent on HTTPS requests only (SecurityMiddleware), and cookies get
# Secure on HTTPS requests (secure_cookies.py), so plain-HTTP `make run` works.
# HTTPS_ONLY: the site is only ever reached over HTTPS (a TLS proxy in front):
# plain HTTP is redirected and every cookie is Secure.
HTTPS_ONLY = envbool("HTTPS_ONLY", False)
SECURE_SSL_REDIRECT = HTTPS_ONLY
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS_ONLY
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000, minimum=0)
# Subdomains and the browsers' preload list commit other sites on the domain:
# the operator's decision, off unless set (their deploy-check notices are silenced below).
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)

# --- Limits (contract: "Serving and limits"; denoise_dashboard/limits/) ---
API_RATE_LIMIT = envint("API_RATE_LIMIT", 6000, minimum=0)  # requests per minute per API key; 0: off
# Generous: keys are 256-bit, so this only stops noise; a client checking its 401s must not meet it.
API_KEY_FAILURES_PER_ADDRESS = envint("API_KEY_FAILURES_PER_ADDRESS", 100, minimum=1)
API_KEY_FAILURE_WINDOW = envint("API_KEY_FAILURE_WINDOW", 600, minimum=1)
LOGIN_FAILURE_LIMIT = envint("LOGIN_FAILURE_LIMIT", 10, minimum=1)
LOGIN_FAILURE_WINDOW = envint("LOGIN_FAILURE_WINDOW", 900, minimum=1)
LIMITS_KEY_PREFIX = f"{REDIS_PREFIX}:limits"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
# A session ends after this many minutes without a request (tenancy/people/sessions.py).
SESSION_IDLE_MINUTES = envint("SESSION_IDLE_MINUTES", 120, minimum=1)
SESSION_COOKIE_AGE = SESSION_IDLE_MINUTES * 60
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = envstr("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(envstr("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed names, gzip and brotli copies, a year's caching (denoise_dashboard/static_files.py).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "denoise_dashboard.static_files.Storage"},
}
WHITENOISE_USE_FINDERS = True
# Only hashed copies are compressed and kept; an uncollected plain name comes from the finders.
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
WHITENOISE_AUTOREFRESH = DEBUG

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    # Plotly sets inline style attributes on the SVG it draws.
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:", "blob:"],
    "connect-src": [CSP.SELF, "ws:", "wss:"],
    "worker-src": [CSP.SELF, "blob:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

REST_FRAMEWORK = {
    # A key first: a request that names one is judged by it alone; a signed-in
    # person's session reads (the browsable API), never writes.
    "DEFAULT_AUTHENTICATION_CLASSES": ["tenancy.auth.ApiKeyAuthentication", "tenancy.auth.SessionReadAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["tenancy.auth.HasProject"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer", "rest_framework.renderers.BrowsableAPIRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": ["provenance.api.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "provenance.api.parsers.JSONWithoutContentType",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.CursorPagination",
    "PAGE_SIZE": 50,
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
}

# The OpenAPI document at /api/v1/schema (core/openapi.py writes what
# the generator cannot see).
SPECTACULAR_SETTINGS = {
    "TITLE": "Denoise Dashboard API",
    "VERSION": "1",
    "DESCRIPTION": (BASE_DIR / "provenance" / "api" / "description.md").read_text(),
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "SCHEMA_PATH_PREFIX_TRIM": False,
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.openapi.add_error_responses",
    ],
    "TAGS": [
        {"name": "ingest", "description": "Agents send events (JSON). OTLP spans go to `POST /v1/traces`, described above."},
        {"name": "traces", "description": "Traces, nodes, root cause and blast radius."},
        {"name": "health", "description": "The nightly DAG health check."},
        {"name": "metrics", "description": "The dashboards' series and the alert metrics over a window."},
        {"name": "alerts", "description": "Alert rules and the alert events they produced."},
        {"name": "evaluation", "description": "Truth sets (versioned datasets) and judged evaluation runs."},
        {"name": "policy", "description": "The versioned fuse policy agents read."},
        {"name": "project", "description": "The project's settings and retention."},
        {"name": "keys", "description": "The project's API keys and their scopes (admin scope)."},
        {"name": "api", "description": "This description."},
    ],
}

# Ingest limits from the contract.
INGEST_MAX_EVENTS = 1000
INGEST_MAX_BYTES = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = INGEST_MAX_BYTES + 1024 * 1024
# Every other API body: larger is a 400.
API_MAX_BODY_BYTES = INGEST_MAX_BYTES

# Retention works in batches of this many nodes (summarizing) and traces
# (deleting), each its own short transaction.
RETENTION_BATCH_NODES = envint("RETENTION_BATCH_NODES", 5000)
RETENTION_BATCH_TRACES = envint("RETENTION_BATCH_TRACES", 500)
# Connections summarizing batches at once (PostgreSQL): one core each.
RETENTION_WORKERS = envint("RETENTION_WORKERS", 2, minimum=1)

WEBHOOK_ALLOW_PRIVATE = envbool("WEBHOOK_ALLOW_PRIVATE", False)
# The built-in webhook inbox: a destination kind that keeps each signed request
# it would send, for a page to show (headers, body, signature checked). Opt-in;
# the demo project's rules use it, since the demo has no receiver of its own.
WEBHOOK_INBOX = envbool("WEBHOOK_INBOX", False)
WEBHOOK_TIMEOUT_SECONDS = envint("WEBHOOK_TIMEOUT_SECONDS", 15, minimum=1)
HEALTH_BROKEN_LINK_GRACE_SECONDS = 600

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "WARNING")},
}

# WhiteNoise serves from the finders in development; an absent STATIC_ROOT is expected then.
import warnings  # noqa: E402

warnings.filterwarnings("ignore", message="No directory at")

# --- DAG health catch-up (H4) ---
# provenance.tasks.check_dag_health only checks projects with no report since the
# last scheduled 03:00, so sending it again is a no-op on a normal night and runs
# a night missed while the scheduler was down once, within 15 minutes of its return.
CELERY_BEAT_SCHEDULE["check-dag-health-catch-up"] = {
    "task": "provenance.tasks.check_dag_health",
    "schedule": 900.0,
}

# --- Alert webhook retries (H3) ---
# After the n-th failed attempt a delivery waits BASE * 2**(n-1) seconds (capped
# at 6 h) and gives up after MAX_ATTEMPTS attempts: 30 s … 32 min, about an hour in all.
WEBHOOK_RETRY_BASE_SECONDS = envint("WEBHOOK_RETRY_BASE_SECONDS", 30)
WEBHOOK_MAX_ATTEMPTS = envint("WEBHOOK_MAX_ATTEMPTS", 8)

# The metrics rollups' NULL-safe unique constraints (and the statistics
# rollup's, carrying its figures: W039) exist on PostgreSQL only; on the
# embedded SQLite default the raw read paths are used and nothing relies on
# them, so the "not supported" notice is noise there.
SILENCED_SYSTEM_CHECKS = ["models.W047", "models.W039"]
if not SECURE_HSTS_INCLUDE_SUBDOMAINS:
    SILENCED_SYSTEM_CHECKS.append("security.W005")
if not SECURE_HSTS_PRELOAD:
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# Prometheus: GET /metrics answers a project's figures, cached this long per
# project; GET /ops/metrics the server's own, for whoever holds this token.
PROMETHEUS_CACHE_SECONDS = envint("PROMETHEUS_CACHE_SECONDS", 5)
OPS_METRICS_TOKEN = envstr("OPS_METRICS_TOKEN", "")

# --- Alert destinations: email, PagerDuty, storm control (issue 25) ---
# Email destinations send through this SMTP server, named by the variables of
# Django's old EMAIL_* settings (the contract's); Django 6 deprecates those
# settings for MAILERS, so they are kept here as the SMTP backend's options.
ALERT_SMTP = {
    "host": envstr("EMAIL_HOST", "localhost"),
    "port": envint("EMAIL_PORT", 25, minimum=1),
    "username": envstr("EMAIL_HOST_USER", ""),
    "password": envstr("EMAIL_HOST_PASSWORD", ""),
    "use_tls": envbool("EMAIL_USE_TLS", False),
}
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "denoise@localhost")
# Invitation links are also mailed (to the address the admin gives) when an SMTP server is named.
INVITATION_EMAIL = bool(envstr("EMAIL_HOST", ""))
# Where PagerDuty destinations post their events (the operator's choice, so not
# held to the private-address guard).
PAGERDUTY_EVENTS_URL = envurl("PAGERDUTY_EVENTS_URL", "https://events.pagerduty.com/v2/enqueue")
# Storm control: a rule notifies at most once per state change and at most once
# in this many seconds; what is held back is recorded (alerts/storm.py).
ALERT_NOTIFY_INTERVAL_SECONDS = envint("ALERT_NOTIFY_INTERVAL_SECONDS", 300, minimum=0)
# The dead man's switch (alerts/watchdog.py) runs apart from the jobs it watches.
CELERY_BEAT_SCHEDULE["watch-checks"] = {"task": "alerts.tasks.watch_checks", "schedule": 60.0}
