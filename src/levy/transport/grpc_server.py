"""The gRPC adapter: every RPC of the registry, served by ``grpc.aio``.

Each method is a thin behaviour: read metadata into a CallContext, call the
pipeline, and map a domain error once to a rich ``google.rpc.Status``. The
server also runs the standard health service and (unless turned off) server
reflection.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status

from levy.app import metrics
from levy.app.auth import read_request_fields
from levy.app.pipeline import Pipeline
from levy.app.registry import MethodInfo, methods, services, streaming_methods
from levy.config import Config
from levy.domain.errors import LevyError, RateLimited, RequestTooLarge, ValidationFailed
from levy.domain.ids import new_ulid
from levy.transport.errors import from_unexpected, to_rpc_status
from levy.transport.peer import client_address

log = logging.getLogger("levy.grpc")
access_log = logging.getLogger("levy.access")

# The largest request any method accepts (the batch upsert's 5 MB) plus room; also the largest answer
# sent (a batch whose answer would be larger is refused before it commits: CallContext.max_response_bytes).
MAX_MESSAGE_BYTES = 8 * 1024 * 1024


class _Undecodable:
    """A request whose bytes are not a valid message of the method's type (truncated,
    a string field that is not UTF-8, ...): answered INVALID_ARGUMENT once the caller is
    admitted, instead of grpc's UNKNOWN carrying the parser's internals."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def ByteSize(self) -> int:
        return self.size


def _deserializer(cls: Any) -> Any:
    parse = cls.FromString

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except DecodeError:
            return _Undecodable(len(data))

    return deserialize


def _make_behavior(pipeline: Pipeline, m: MethodInfo, config: Config):  # type: ignore[no-untyped-def]
    limit = m.policy.max_body_bytes or config.max_body_bytes

    async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
        started = time.perf_counter()
        ctx = pipeline.context(request_id="req_" + new_ulid(), transport="grpc")
        ctx.max_response_bytes = MAX_MESSAGE_BYTES
        forwarded = read_request_fields(ctx, context.invocation_metadata() or ())
        try:
            with pipeline.slot(ctx):
                size = request.ByteSize()
                if size > limit:
                    raise RequestTooLarge(
                        f"The request is {size} bytes; the maximum is {limit} bytes. Split it into smaller requests."
                    )
                peer = client_address(context.peer(), forwarded, trust_forwarded_for=config.trust_forwarded_for)
                if isinstance(request, _Undecodable):
                    await pipeline.admit(m, ctx, peer=peer)
                    raise ValidationFailed(
                        f"The request is not a valid {m.request_cls.DESCRIPTOR.full_name} message: its bytes "
                        "cannot be decoded (truncated, or a string field that is not valid UTF-8).",
                        type="json_invalid",
                    )
                response = await pipeline.invoke(m, request, ctx, peer=peer, deadline=context.time_remaining())
        except LevyError as e:
            err: LevyError = e
        except Exception as e:
            err = from_unexpected(e, ctx, m.full_name)
        else:
            context.set_trailing_metadata(_trailers(ctx))
            _observe(m, ctx, "OK", started)
            return response
        # grpcio-status puts the rich status in `grpc-status-details-bin`; our own
        # trailers (request id, rate limit, ...) go beside it.
        status = rpc_status.to_status(to_rpc_status(err))
        trailers = [*status.trailing_metadata, *_trailers(ctx)]
        if isinstance(err, RateLimited):
            # Retry-After for gRPC: a client whose service config has a retry policy
            # waits this long before its next attempt (gRFC A6 server pushback).
            trailers.append(("grpc-retry-pushback-ms", str(err.retry_after * 1000)))
        _observe(m, ctx, status.code.name, started)
        await context.abort_with_status(status._replace(trailing_metadata=tuple(trailers)))

    return behavior


def _make_stream_behavior(pipeline: Pipeline, m: MethodInfo, config: Config):  # type: ignore[no-untyped-def]
    """A server-streaming RPC (``WatchEvents``): admitted like any call, then each message of the
    handler sent as it comes; a domain error (before or during the stream) ends it with the rich
    status; the caller's cancellation ends the handler. The handler yields None once when it is
    ready: the initial metadata goes then (a client that waits for it knows that what is committed
    from then on reaches it)."""
    limit = m.policy.max_body_bytes or config.max_body_bytes

    async def behavior(request: Any, context: grpc.aio.ServicerContext) -> Any:
        started = time.perf_counter()
        ctx = pipeline.context(request_id="req_" + new_ulid(), transport="grpc")
        forwarded = read_request_fields(ctx, context.invocation_metadata() or ())
        try:
            size = request.ByteSize()
            if size > limit:
                raise RequestTooLarge(f"The request is {size} bytes; the maximum is {limit} bytes.")
            peer = client_address(context.peer(), forwarded, trust_forwarded_for=config.trust_forwarded_for)
            await pipeline.admit(m, ctx, peer=peer)
            if isinstance(request, _Undecodable):
                raise ValidationFailed(
                    f"The request is not a valid {m.request_cls.DESCRIPTOR.full_name} message: its bytes "
                    "cannot be decoded.", type="json_invalid")
            async for item in pipeline.stream(m, request, ctx):
                if item is None:  # the handler is ready (WatchEvents: its cursor is fixed)
                    await context.send_initial_metadata(_trailers(ctx))
                    continue
                yield item
        except LevyError as e:
            err: LevyError = e
        except Exception as e:
            err = from_unexpected(e, ctx, m.full_name)
        else:  # pragma: no cover - the handler's stream ends only by cancellation or an error
            _observe(m, ctx, "OK", started)
            return
        status = rpc_status.to_status(to_rpc_status(err))
        _observe(m, ctx, status.code.name, started)
        await context.abort_with_status(status._replace(trailing_metadata=tuple(status.trailing_metadata)))

    return behavior


def _observe(m: MethodInfo, ctx: Any, status: str, started: float) -> None:
    elapsed = time.perf_counter() - started
    metrics.observe("grpc", m.full_name, status, elapsed)
    if access_log.isEnabledFor(logging.INFO):  # the record's fields are not built for nothing
        access_log.info("%s %s", m.full_name, status, extra={
            "request_id": ctx.request_id, "transport": "grpc", "method": m.full_name, "status": status,
            "duration_ms": round(elapsed * 1000, 3)})


def _trailers(ctx: Any) -> list[tuple[str, str]]:
    out = [("x-request-id", ctx.request_id), ("service-version", str(ctx.version) if ctx.version else _latest())]
    out.extend(ctx.response_headers.items())
    return out


def _latest() -> str:
    from levy.domain.versioning import CURRENT

    return CURRENT


def generic_handlers(pipeline: Pipeline, config: Config) -> list[grpc.GenericRpcHandler]:
    by_service: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
    for m in methods():
        by_service.setdefault(m.service, {})[m.name] = grpc.unary_unary_rpc_method_handler(
            _make_behavior(pipeline, m, config),
            request_deserializer=_deserializer(m.request_cls),
            response_serializer=m.response_cls.SerializeToString,
        )
    for m in streaming_methods():
        by_service.setdefault(m.service, {})[m.name] = grpc.unary_stream_rpc_method_handler(
            _make_stream_behavior(pipeline, m, config),
            request_deserializer=_deserializer(m.request_cls),
            response_serializer=m.response_cls.SerializeToString,
        )
    return [grpc.method_handlers_generic_handler(name, hs) for name, hs in by_service.items()]


class GrpcServer:
    """The aio server with health and reflection; knows how to drain."""

    def __init__(self, pipeline: Pipeline, config: Config, *, reuse_port: bool = False) -> None:
        """``reuse_port``: bind with SO_REUSEPORT (one of ``levy serve``'s workers, levy.workers)."""
        self.config = config
        self.server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", int(reuse_port)),
                # Metadata (headers) of a call: the HTTP gateway's header limit, as both
                # gRPC's soft and hard limit (no band of randomly refused sizes between).
                ("grpc.max_metadata_size", config.max_header_bytes),
                ("grpc.absolute_max_metadata_size", config.max_header_bytes),
            ]
        )
        self.server.add_generic_rpc_handlers(generic_handlers(pipeline, config))
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.service_names = [s.full_name for s in services()]
        if config.grpc_reflection:
            reflection.enable_server_reflection(
                [*self.service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
                self.server,
            )
        self.port = 0

    async def start(self, address: str) -> int:
        self.port = self.server.add_insecure_port(address)
        if not self.port:
            raise OSError(f"cannot listen for gRPC on {address}")
        await self.server.start()
        for name in ["", *self.service_names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        return self.port

    async def begin_shutdown(self) -> None:
        """Health turns NOT_SERVING (for load balancers) before the drain."""
        await self.health.enter_graceful_shutdown()

    async def stop(self, grace: float) -> None:
        """Refuse new RPCs; in-flight ones get ``grace`` seconds to finish."""
        await self.server.stop(grace)
