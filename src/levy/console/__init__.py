"""The web console: server-rendered pages under ``/console`` on the HTTP port, a third
transport beside gRPC and REST.

Every action calls the same RPC handlers through the same pipeline as the API
(``Pipeline.admit_principal`` then ``Pipeline.run``): the signed-in user's
principal stands where an API key would, so validation, authorization (admin-only
methods) and errors are the API's. Views parse forms, call, and render templates;
no business rule lives here or in a template, and no unit of work is opened here:
what the API has no RPC for (people, sessions, the audit log, searches, documents)
is ``levy.app.console_service.ConsoleService``. Routes are ``levy.console.routing`` objects
(405 for a wrong method, ``url_for`` for every URL); the pages are grouped in
``levy.console.pages``.

Security: session cookie HttpOnly, SameSite=Strict, Secure when
LEVY_CONSOLE_SECURE_COOKIES, with an expiry; a CSRF token on every form (the
session's, or a double-submit cookie on the sign-in form) and, when the browser
sends one, an ``Origin`` naming this host; bodies read only after those checks,
within the API's body deadline and the limits of ``levy.console.http``; a strict
Content-Security-Policy (no inline script or style); another organization's
objects answer 404 because every call runs as the user's organization.
"""

from levy.console.app import Console

__all__ = ["Console"]
