"""Configuration: command-line flags, then LEVY_* environment variables, then defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from levy.store.db import DEFAULT_DATABASE_URL


@dataclass(frozen=True)
class Config:
    database_url: str = DEFAULT_DATABASE_URL
    grpc_address: str = "127.0.0.1:50051"
    http_address: str = "127.0.0.1:8080"
    # Seconds in-flight requests get to finish after SIGTERM/SIGINT.
    shutdown_grace_seconds: float = 10.0
    # Seconds between NOT_SERVING (health, /healthz 503) and closing the listeners,
    # so that load balancers stop sending traffic first.
    shutdown_drain_seconds: float = 0.0
    # How long an authenticated key is trusted without a database read.
    auth_cache_seconds: float = 2.0
    # Seconds a calculation may use cached presets (settings, registrations, products,
    # customers) without a database read; this process's writes drop them at once (0 = off).
    preset_cache_seconds: float = 1.0
    # Default request body limit (bytes) where a method declares none.
    max_body_bytes: int = 1_048_576
    db_pool_size: int = 10
    # Seconds a new database connection (PostgreSQL) or a pool checkout may take before the
    # request fails with 503, so that a database that is down does not hang requests.
    db_connect_timeout_seconds: float = 5.0
    # Seconds a SQLite writer waits for the database lock before the request fails with 503.
    db_busy_timeout_seconds: float = 10.0
    # A claimed Idempotency-Key whose request has not finished after this many
    # seconds is taken over by a retry (its process is presumed dead).
    idempotency_lock_seconds: float = 30.0
    # Serve gRPC server reflection (turn off in hardened deployments).
    grpc_reflection: bool = True
    log_level: str = "info"
    # Worker processes sharing the ports (SO_REUSEPORT); 0 = one per CPU core.
    workers: int = 0
    # Per API key GCRA limit: sustained requests per second and burst ceiling (0 = no limit).
    rate_limit_per_second: float = 100.0
    rate_limit_burst: int = 200
    # Failed authentications allowed per client address per minute before 429 (0 = no limit).
    auth_failure_limit_per_minute: int = 20
    # Take the client address from the last X-Forwarded-For entry (behind a trusted proxy only).
    trust_forwarded_for: bool = False
    # Redis shared by all replicas for rate limits (redis://host:6379/0); empty = in-process.
    redis_url: str = ""
    # A handler running longer is cancelled (503 / DEADLINE_EXCEEDED); 0 = no timeout.
    request_timeout_seconds: float = 30.0
    # Requests handled at once per process; beyond it 503 / RESOURCE_EXHAUSTED at once (0 = no cap).
    max_concurrent_requests: int = 256
    # Fraction of max_concurrent_requests one API key may hold at once; beyond it the same 503 (1 = no share).
    key_concurrency_share: float = 0.5
    # An HTTP request's line and headers together (bytes; over it 431 and the connection closed); the
    # same bound is gRPC's metadata limit (grpc.max_metadata_size).
    max_header_bytes: int = 32_768
    # Header fields per HTTP request (over it 431 and the connection closed).
    max_header_count: int = 100
    # Seconds a client has to send a request's line and headers, from its first byte (or from
    # connecting); then the connection is closed (408).
    header_read_timeout_seconds: float = 10.0
    # Seconds a client has to send a request's body; then 408 and the connection is closed.
    # Reading the body holds no concurrency slot.
    body_read_timeout_seconds: float = 30.0
    # Serve Prometheus metrics at GET /metrics (no authentication: keep the port internal).
    metrics: bool = True
    # Serve the web console under /console on the HTTP port (docs/console.md).
    console: bool = True
    # Mark console cookies Secure (set when the console is reached over HTTPS, e.g. behind a TLS proxy).
    console_secure_cookies: bool = False
    # Hours a console session lasts from sign-in.
    console_session_hours: float = 12.0
    # Sign-in attempts allowed per minute per account and per client address (0 = no limit).
    console_sign_in_per_account_per_minute: int = 5
    console_sign_in_per_address_per_minute: int = 20
    # Largest exemption certificate document the console accepts (bytes).
    console_max_upload_bytes: int = 5_242_880
    # Event loop of `levy serve`: auto (uvloop when installed), uvloop or asyncio.
    event_loop: str = "auto"
    # Webhooks (docs/events.md). Run the delivery worker in this process (each replica may: a
    # delivery is taken by one worker at a time).
    webhook_worker: bool = True
    # Seconds between the worker's looks for new events and due retries when it finds none.
    webhook_poll_seconds: float = 1.0
    # Seconds one delivery attempt may take (connect, send, answer) before it counts as failed.
    webhook_timeout_seconds: float = 10.0
    # Waits before each retry after a failed attempt (s, m, h, d); after the last, the delivery fails.
    webhook_retry_schedule: str = "5s,5m,30m,2h,5h,10h,10h"
    # Hours an endpoint may fail every delivery before Levy disables it (webhook_endpoint.disabled).
    webhook_disable_after_hours: float = 120.0
    # Allow http:// endpoint URLs (https only otherwise).
    webhook_allow_http: bool = False
    # Allow endpoints on loopback, private and link-local addresses (refused otherwise: SSRF).
    webhook_allow_private: bool = False
    # The events job (docs/events.md): seconds between its passes in this process (0 = not run
    # here). Each pass produces the time-based events (certificate.expiring and .expired,
    # nexus.threshold_approaching and .threshold_crossed), once per organization, object and period
    # however many replicas run it, and prunes old events and deliveries.
    event_job_seconds: float = 3600.0
    # Days before a certificate's expires_at from which certificate.expiring is produced (and days
    # after it during which certificate.expired still is).
    certificate_expiring_days: int = 30
    # Days events and settled webhook deliveries are kept (0 = forever).
    event_retention_days: float = 90.0

    # The online check of EU VAT ids (docs/international.md, "VIES"): the URL of the VIES REST
    # service's check-vat-number operation
    # (https://ec.europa.eu/taxation_customs/vies/rest-api/check-vat-number); empty = off.
    vies_url: str = ""
    # Seconds one VIES request may take; then the id reads as "unavailable" and its format decides.
    vies_timeout_seconds: float = 3.0
    # The seller's own EU VAT number, sent as the requester so that VIES returns a consultation
    # number (request identifier); empty = none sent.
    vies_requester_vat: str = ""

    # Seconds between a server's looks for new rate imports, after which it swaps its in-memory rate
    # table (0 = never).
    rates_refresh_seconds: float = 10.0
    # Where this host keeps the address file of ZIP+4 and street-range records; empty = beside a
    # SQLite database (<file>.addresses/), else ~/.cache/levy/addresses/<digest>/.
    address_dir: str = ""

    @classmethod
    def from_env(cls, **overrides: object) -> Config:
        values: dict[str, object] = {}
        for f in fields(cls):
            env = os.environ.get("LEVY_" + f.name.upper())
            if env is not None and env != "":
                values[f.name] = _coerce(f.type, env)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]


def _coerce(type_name: object, raw: str) -> object:
    t = str(type_name)
    if t == "bool":
        return raw.strip().lower() in {"1", "true", "yes", "on"}
    if t == "int":
        return int(raw)
    if t == "float":
        return float(raw)
    return raw


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]") or "127.0.0.1", int(port)
