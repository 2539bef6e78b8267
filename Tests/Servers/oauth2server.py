"""An OAuth2 authorization server and a resource behind it: a one-file Django project around
django-oauth-toolkit, with its database in sqlite. Used like Django's manage.py:

    oauth2server.py migrate
    oauth2server.py createsuperuser --noinput --username U --email E   (DJANGO_SUPERUSER_PASSWORD)
    oauth2server.py createapplication --client-id ID --client-secret S --name N confidential password
    oauth2server.py runserver 127.0.0.1:PORT --noreload --skip-checks

Environment: OAUTH2_DB (the sqlite file, required), OAUTH2_ACCESS_TOKEN_SECONDS (an access
token's lifetime, default 2).

Tokens rotate: a refresh answers a new refresh token and revokes the one it used, which is
then answered 400 invalid_grant (there is no grace period). Client secrets are stored hashed,
as django-oauth-toolkit does by default (with a fast hasher: this is a test server).

    POST /o/token/          the token endpoint (grants password, client_credentials,
                            refresh_token; client auth by Basic or by form fields);
                            /o/token-refreshed/N/: the same, but tokens a refresh gives live N s
    POST /o/revoke_token/   RFC 7009 revocation (token=…, token_type_hint=refresh_token, client
                            auth as above): a revoked refresh token is answered 400
                            invalid_grant from then on, and its access token is gone too
    GET or POST /api/me     the resource: with a valid bearer token 200 {"user": name or null
                            (client credentials), "client_id": …, "token_suffix": the token's
                            last 6 characters}; otherwise 401 with WWW-Authenticate: Bearer
                            error="invalid_token". ?delay_ms=N sleeps N ms (at most 30000)
                            first, and the token is checked after the sleep
    GET /stats              {"token_posts": n, "grants": {"password": n, "client_credentials": n,
                            "refresh_token": n, <any other grant_type>: n}, "token_errors": n
                            (token answers other than 200), "resource_401": n, "resource_200": n}
    GET or POST /stats/reset  zeroes them: {"reset": true}
"""
import json
import logging
import os
import re
import sys
import threading
import time
import urllib.parse

import django
from django.conf import settings

ACCESS_TOKEN_SECONDS = int(os.environ.get("OAUTH2_ACCESS_TOKEN_SECONDS", "2"))


def access_token_seconds(request):
    """An access token's lifetime: ACCESS_TOKEN_SECONDS, but N for a refresh at the token
    endpoint /o/token-refreshed/N/ (a test that renews once for many calls, whose arrival a
    loaded machine may spread, keeps the renewed token long enough to count one renewal).
    oauthlib refuses a query string on a token endpoint, hence the path."""
    match = re.search(r"/o/token-refreshed/(\d+)/$", urllib.parse.urlsplit(request.uri).path)
    if match and request.grant_type == "refresh_token":
        return int(match.group(1))
    return ACCESS_TOKEN_SECONDS


settings.configure(
    DEBUG=False,
    SECRET_KEY="curlxhr-oauth2-test-server",  # a loopback test server: nothing to protect
    ALLOWED_HOSTS=["*"],
    USE_TZ=True,
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "oauth2_provider"],
    MIDDLEWARE=[f"{__name__}.count_token_posts"],
    DATABASES={
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ["OAUTH2_DB"],
            # runserver answers each request in a thread of its own: writers wait for each
            # other (up to 30 s) instead of failing with "database is locked", which a
            # deferred transaction that reads and then writes would do at once.
            "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE",
                        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
        }
    },
    # Django's default (PBKDF2, a million rounds) costs a core about half a second per client
    # secret or user password checked; tests that ask for many tokens at once would wait on it.
    PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
    DEFAULT_AUTO_FIELD="django.db.models.AutoField",
    OAUTH2_PROVIDER={
        # oauthlib calls it for each token (django-oauth-toolkit passes it on as token_expires_in).
        "ACCESS_TOKEN_EXPIRE_SECONDS": access_token_seconds,
        "ROTATE_REFRESH_TOKEN": True,
        "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,  # a rotated refresh token is refused at once
        "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": False,  # keeps the password grant (RFC 9700 discourages it)
    },
)
django.setup()

from django.core.management import execute_from_command_line  # noqa: E402  (after setup)
from django.core.servers import basehttp  # noqa: E402
from django.http import JsonResponse  # noqa: E402
from django.urls import include, path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402
from oauth2_provider.oauth2_backends import get_oauthlib_core  # noqa: E402
from oauth2_provider.views import TokenView  # noqa: E402

# The password grant logs RFC 9700's advice against it on every use: once a token, the log
# would be mostly that.
logging.getLogger("oauth2_provider").addFilter(lambda record: "RFC 9700" not in record.getMessage())

lock = threading.Lock()


def zeroed():
    return {"token_posts": 0, "grants": {"password": 0, "client_credentials": 0, "refresh_token": 0},
            "token_errors": 0, "resource_401": 0, "resource_200": 0}


stats = zeroed()


def count(key):
    with lock:
        stats[key] += 1


def count_token_posts(get_response):
    """Counts the POSTs to the token endpoint by grant_type, and those not answered 200."""
    def middleware(request):
        if request.method != "POST" or not (request.path == "/o/token/" or request.path.startswith("/o/token-refreshed/")):
            return get_response(request)
        # request.body first: it keeps the body, so request.POST and the view still read it.
        request.body
        grant = request.POST.get("grant_type", "")
        with lock:
            stats["token_posts"] += 1
            stats["grants"][grant] = stats["grants"].get(grant, 0) + 1
        response = get_response(request)
        if response.status_code != 200:
            count("token_errors")
        return response
    return middleware


@csrf_exempt
def me(request):
    if request.method not in ("GET", "POST"):
        return JsonResponse({"error": "method not allowed"}, status=405)
    try:
        delay_ms = min(max(int(request.GET.get("delay_ms", "0")), 0), 30000)
    except ValueError:
        return JsonResponse({"error": "delay_ms is not a number"}, status=400)
    if delay_ms:
        time.sleep(delay_ms / 1000)
    valid, r = get_oauthlib_core().verify_request(request, scopes=[])
    if not valid:
        count("resource_401")
        response = JsonResponse({"error": "invalid_token"}, status=401)
        response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
        return response
    count("resource_200")
    token = r.access_token.token
    return JsonResponse({"user": r.user.get_username() if r.user else None,
                         "client_id": r.client.client_id, "token_suffix": token[-6:]})


def stats_view(request):
    with lock:
        return JsonResponse(json.loads(json.dumps(stats)))


@csrf_exempt
def stats_reset(request):
    global stats
    with lock:
        stats = zeroed()
    return JsonResponse({"reset": True})


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("o/token-refreshed/<int:seconds>/", TokenView.as_view()),
    path("api/me", me),
    path("stats", stats_view),
    path("stats/reset", stats_reset),
]

if __name__ == "__main__":
    # runserver's listen backlog is 10: a burst of concurrent connects would see SYNs dropped
    # and retried a second later.
    basehttp.WSGIServer.request_queue_size = 128
    execute_from_command_line(sys.argv)
