"""Prometheus metrics, the same for gRPC and REST (served at ``GET /metrics``).

With several workers (``levy serve --workers N``) the parent sets
``PROMETHEUS_MULTIPROC_DIR`` before forking, each worker writes its samples
there, and whichever worker answers ``/metrics`` aggregates all of them
(prometheus_client multiprocess mode: counters and histograms summed, gauges
summed over live workers).

Labels: ``transport`` (grpc | rest), ``method`` (the RPC's full name, e.g.
``levy.v1.CustomerService.CreateCustomer``; ``unmatched`` for REST paths that
match no route), ``status`` (the HTTP status for REST, the gRPC code name for
gRPC).
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter("levy_requests_total", "Requests handled, by transport, method and status.",
                   ["transport", "method", "status"])
LATENCY = Histogram("levy_request_duration_seconds", "Request latency (seconds), by transport and method.",
                    ["transport", "method"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0))
RATE_LIMITED = Counter("levy_rate_limited_total",
                       "Requests refused with 429, by kind (api_key: per-key limit; auth_failures: failed "
                       "authentication per client address).", ["kind"])
OVERLOADED = Counter("levy_rejected_total",
                     "Requests refused by the process's safeguards, by reason (concurrency: over "
                     "LEVY_MAX_CONCURRENT_REQUESTS; key_share: one API key over its share of it; timeout: over "
                     "LEVY_REQUEST_TIMEOUT_SECONDS; body_timeout: over LEVY_BODY_READ_TIMEOUT_SECONDS).",
                     ["reason"])
LIMITER_ERRORS = Counter("levy_rate_limiter_errors_total",
                         "Rate-limit checks that could not reach Redis (the request was allowed).")
IN_FLIGHT = Gauge("levy_requests_in_flight", "Requests being handled now.", multiprocess_mode="livesum")
DB_POOL_CHECKED_OUT = Gauge("levy_db_pool_checked_out", "Database connections checked out of the pool.",
                            multiprocess_mode="livesum")
DB_POOL_SIZE = Gauge("levy_db_pool_size", "Configured database pool size (per process).",
                     multiprocess_mode="livesum")
DB_STATEMENTS = Counter("levy_db_statements_total",
                        "SQL statements sent to the database (an executemany counts once), and COMMITs.")


# The labelled children per (transport, method, status), looked up once: ``labels()``
# validates and joins the label values under a lock on every call (about half of
# what counting a request cost). Bounded: methods are the registry's (or
# "unmatched") and statuses a fixed set.
_CHILDREN: dict[tuple[str, str, str], tuple[Any, Any]] = {}


def observe(transport: str, method: str, status: str, seconds: float) -> None:
    key = (transport, method, status)
    children = _CHILDREN.get(key)
    if children is None:
        children = _CHILDREN[key] = (REQUESTS.labels(transport, method, status), LATENCY.labels(transport, method))
    children[0].inc()
    children[1].observe(seconds)


_pool_last: list[int] = [-1]  # the value last set (a set costs a lock, and a file write with workers)


def observe_pool(engine: object) -> None:
    pool = getattr(engine, "pool", None)
    checkedout = getattr(pool, "checkedout", None)
    if checkedout is not None:
        value = checkedout()
        if value != _pool_last[0]:
            _pool_last[0] = value
            DB_POOL_CHECKED_OUT.set(value)


def count_statements(engine: Any) -> None:
    """Count ``engine``'s statements and commits in ``levy_db_statements_total`` (the
    benchmark reports them per request; docs/performance.md)."""
    from sqlalchemy import event

    from levy.store import db

    inc = DB_STATEMENTS.inc
    db.add_statement_hook(engine, inc)
    sync_engine = engine.sync_engine
    event.listen(sync_engine, "before_cursor_execute", lambda *_a: inc())  # levy.store.db: the others
    event.listen(sync_engine, "commit", lambda *_a: inc())
    if sync_engine.dialect.name != "sqlite":  # SQLite's BEGIN is sent by levy.store.db and counted there
        event.listen(sync_engine, "begin", lambda *_a: inc())


def render() -> tuple[bytes, str]:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
