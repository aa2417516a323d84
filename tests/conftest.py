"""Registers the shared fixtures defined in ``levyserver`` (a plain module, so
that tests can import its helpers by a name that is unique)."""

from levyserver import *  # noqa: F401,F403
from levyserver import (  # noqa: F401  (fixtures, registered by being names of this module)
    admin_http,
    anon_http,
    channel,
    database_url,
    http,
    other_tenant,
    server,
    tenant,
)
