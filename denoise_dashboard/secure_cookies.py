"""Cookies carry `Secure` whenever the request itself came over HTTPS (directly,
or through a trusted proxy: TRUST_PROXY_HEADERS), even where the installation
also answers plain HTTP (the embedded `make run` on 127.0.0.1) and so cannot set
SESSION_COOKIE_SECURE for everyone. HTTPS_ONLY sets them for every request."""


class SecureCookiesMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.is_secure():
            for cookie in response.cookies.values():
                cookie["secure"] = True
        return response
