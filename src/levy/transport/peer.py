"""The client's address, for limits keyed on it (failed authentication)."""

from __future__ import annotations


def client_address(peer: str | None, forwarded_for: str | None, *, trust_forwarded_for: bool) -> str:
    """The address behind the connection: the last ``X-Forwarded-For`` entry when the
    deployment says a trusted proxy appends it (``LEVY_TRUST_FORWARDED_FOR``), else the
    connection's peer. ``peer`` is either a bare host or gRPC's ``ipv4:1.2.3.4:5678`` /
    ``ipv6:[::1]:5678`` form."""
    if trust_forwarded_for and forwarded_for:
        last = forwarded_for.split(",")[-1].strip()
        if last:
            return last
    if not peer:
        return ""
    if peer.startswith(("ipv4:", "ipv6:")):
        host = peer[5:]
        if host.startswith("["):
            return host[1:].split("]", 1)[0]
        return host.rsplit(":", 1)[0]
    return peer
