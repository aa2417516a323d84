"""Every RPC of the contract, read from the protos' descriptors.

This is the single list of operations: the gRPC server, the REST gateway
routes and the OpenAPI document are all built from it. Handlers register
against a method's full name; a method without a handler answers
UNIMPLEMENTED (gRPC) / 501 (REST). The handler modules are listed in the
composition root (:mod:`levy.app.bootstrap`), which collects their handlers
with :func:`collect_handlers`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from google.api import annotations_pb2, field_behavior_pb2, http_pb2
from google.protobuf import descriptor, message, message_factory

from levy.v1 import (
    calculations_pb2,
    customers_pb2,
    events_pb2,
    filings_pb2,
    locations_pb2,
    options_pb2,
    organization_pb2,
    products_pb2,
    reference_pb2,
    transactions_pb2,
)

if TYPE_CHECKING:
    from levy.app.context import CallContext

SERVICE_MODULES = (
    calculations_pb2,
    transactions_pb2,
    customers_pb2,
    products_pb2,
    reference_pb2,
    organization_pb2,
    locations_pb2,
    filings_pb2,
    events_pb2,
)

Handler = Callable[[Any, "CallContext"], Awaitable[message.Message]]
# A step run before a handler's write transaction opens (:func:`handles`).
Before = Callable[[Any, "CallContext"], Awaitable[None]]


@dataclass(frozen=True)
class MethodInfo:
    """One RPC with everything the transports need to serve it."""

    full_name: str  # levy.v1.CustomerService.CreateCustomer
    service: str  # levy.v1.CustomerService
    name: str  # CreateCustomer
    descriptor: descriptor.MethodDescriptor
    request_cls: type[message.Message]
    response_cls: type[message.Message]
    http: http_pb2.HttpRule
    policy: options_pb2.MethodPolicy

    @property
    def grpc_path(self) -> str:
        return f"/{self.service}/{self.name}"

    @property
    def http_method(self) -> str:
        return self.http.WhichOneof("pattern").upper()

    @property
    def http_path(self) -> str:
        return getattr(self.http, self.http.WhichOneof("pattern"))

    @property
    def success_status(self) -> int:
        return self.policy.success_status or 200


@cache
def services() -> tuple[descriptor.ServiceDescriptor, ...]:
    return tuple(s for mod in SERVICE_MODULES for s in mod.DESCRIPTOR.services_by_name.values())


@cache
def methods() -> tuple[MethodInfo, ...]:
    """Every unary RPC: each has a REST route (the gateway, the OpenAPI document)."""
    return _infos(streaming=False)


@cache
def streaming_methods() -> tuple[MethodInfo, ...]:
    """The server-streaming RPCs (``EventService.WatchEvents``): gRPC only, without a REST route
    (their ``http`` rule is empty); their handlers are async generators."""
    return _infos(streaming=True)


def _infos(*, streaming: bool) -> tuple[MethodInfo, ...]:
    out = []
    for svc in services():
        for m in svc.methods:
            if m.server_streaming != streaming:
                continue
            opts = m.GetOptions()
            out.append(
                MethodInfo(
                    full_name=m.full_name,
                    service=svc.full_name,
                    name=m.name,
                    descriptor=m,
                    request_cls=message_factory.GetMessageClass(m.input_type),
                    response_cls=message_factory.GetMessageClass(m.output_type),
                    http=opts.Extensions[annotations_pb2.http],
                    policy=opts.Extensions[options_pb2.method_policy],
                )
            )
    return tuple(out)


@cache
def method_by_name() -> dict[str, MethodInfo]:
    return {m.full_name: m for m in methods()}


# Field options never change once the descriptors are loaded: read each once.
@cache
def field_policy(field: descriptor.FieldDescriptor) -> options_pb2.FieldPolicy:
    return field.GetOptions().Extensions[options_pb2.field_policy]


@cache
def is_output_only(field: descriptor.FieldDescriptor) -> bool:
    return field_behavior_pb2.OUTPUT_ONLY in field.GetOptions().Extensions[field_behavior_pb2.field_behavior]


def output_only_names(message_descriptor: descriptor.Descriptor) -> tuple[str, ...]:
    """The message's ``OUTPUT_ONLY`` fields, in declaration order (read-only to callers)."""
    return tuple(f.name for f in message_descriptor.fields if is_output_only(f))


def input_names(message_descriptor: descriptor.Descriptor) -> tuple[str, ...]:
    """The message's fields a caller may send, in declaration order."""
    return tuple(f.name for f in message_descriptor.fields if not is_output_only(f))


def handles(full_name: str, *, before_transaction: Before | None = None) -> Callable[[Handler], Handler]:
    """Mark ``fn`` as the handler of ``levy.v1.Service.Method`` (collected by
    :func:`collect_handlers` when the application is built).

    ``before_transaction(request, ctx)``: what the handler needs done before a write transaction
    opens (a slow outside service asked, its answers left on ``ctx``), for a call whose handler
    runs inside the request's own write transaction (:mod:`levy.app.idempotency`); see
    :func:`before_transaction`."""
    if full_name not in method_by_name() and full_name not in {m.full_name for m in streaming_methods()}:
        raise KeyError(f"no such RPC in the protos: {full_name}")

    def mark(fn: Handler) -> Handler:
        fn.__levy_rpc__ = full_name  # type: ignore[attr-defined]
        fn.__levy_before_transaction__ = before_transaction  # type: ignore[attr-defined]
        return fn

    return mark


def before_transaction(handler: Handler) -> Before | None:
    """The step :func:`handles` was given to run before ``handler``'s write transaction, if any."""
    return getattr(handler, "__levy_before_transaction__", None)


def collect_handlers(modules: Iterable[ModuleType]) -> dict[str, Handler]:
    """Every handler the ``modules`` mark with :func:`handles`, by RPC name;
    two handlers of one RPC are refused (a name no RPC has already was)."""
    table: dict[str, Handler] = {}
    for module in modules:
        for value in vars(module).values():
            name = getattr(value, "__levy_rpc__", None)
            if name is None or getattr(value, "__module__", None) != module.__name__:
                continue
            if name in table:
                raise KeyError(f"two handlers for {name}")
            table[name] = value
    return table
