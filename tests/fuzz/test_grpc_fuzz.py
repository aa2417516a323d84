"""Structure-aware fuzzing of the gRPC side: Hypothesis strategies built from
the request message descriptors (every field, nested messages, repeated
fields around their limits, integer extremes, odd timestamps, unicode
strings), sent to a live server for every RPC of the registry with an admin
key. Every answer is a valid response message or a documented status code,
never INTERNAL or UNKNOWN. Bounded and derandomized.
"""

from __future__ import annotations

import os
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor, message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from levyserver import Tenant
from levy.app.registry import MethodInfo, field_policy, methods

FD = descriptor.FieldDescriptor
MAX_EXAMPLES = int(os.environ.get("LEVY_GRPC_FUZZ_EXAMPLES", "15"))

DOCUMENTED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.UNIMPLEMENTED,
    grpc.StatusCode.UNAVAILABLE,
}

_INT = {
    FD.TYPE_INT32: (-(2**31), 2**31 - 1), FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1), FD.TYPE_UINT32: (0, 2**32 - 1), FD.TYPE_FIXED32: (0, 2**32 - 1),
    FD.TYPE_INT64: (-(2**63), 2**63 - 1), FD.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1), FD.TYPE_UINT64: (0, 2**64 - 1), FD.TYPE_FIXED64: (0, 2**64 - 1),
}


def _text(max_length: int) -> st.SearchStrategy[str]:
    limit = max_length or 64
    return st.one_of(
        st.text(max_size=min(limit, 40)),
        st.sampled_from(["", " ", "cust_x", "prd_x", "US-ST-CA", "CLOTHING.APPAREL.GENERAL", "_B2B", "2026-02-30",
                         "-1", "1e309", "0.0000001", "99999999999999999999999", "\x00", "'; DROP TABLE customers; --"]),
        st.text(min_size=limit, max_size=limit + 2),  # at and just over the limit
    )


def _scalar(f: FD) -> st.SearchStrategy[Any]:
    t = f.type
    if t == FD.TYPE_STRING:
        return _text(field_policy(f).max_length)
    if t == FD.TYPE_BOOL:
        return st.booleans()
    if t in _INT:
        lo, hi = _INT[t]
        return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, -1, 1, 1000, 1001]).filter(
            lambda v, lo=lo, hi=hi: lo <= v <= hi))
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32 if t == FD.TYPE_FLOAT else 64)
    if t == FD.TYPE_ENUM:
        return st.sampled_from([v.number for v in f.enum_type.values])
    if t == FD.TYPE_BYTES:
        return st.binary(max_size=64)
    raise TypeError(t)  # pragma: no cover


def message_strategy(desc: descriptor.Descriptor, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A dict of field name -> value (or sub-dict) for ``desc``."""
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for f in desc.fields:
        if _is_map(f):  # map<string, scalar>: a dict of fuzzed keys and values
            entry = f.message_type
            optional[f.name] = st.dictionaries(_scalar(entry.fields_by_name["key"]),
                                               _scalar(entry.fields_by_name["value"]), max_size=3)
            continue
        if f.type == FD.TYPE_MESSAGE:
            full = f.message_type.full_name
            if full == "google.protobuf.Timestamp":
                value: st.SearchStrategy[Any] = st.fixed_dictionaries({
                    "seconds": st.one_of(st.integers(-62135596800, 253402300799),
                                         st.integers(-(2**63), 2**63 - 1)),
                    "nanos": st.one_of(st.integers(0, 999_999_999), st.integers(-(2**31), 2**31 - 1)),
                })
            elif full == "google.protobuf.FieldMask":
                value = st.fixed_dictionaries({"paths": st.lists(
                    st.one_of(st.sampled_from([g.name for g in desc.fields]), st.text(max_size=10)), max_size=4)})
            elif full.startswith("google.protobuf."):
                continue
            elif depth >= 4:
                continue
            else:
                value = message_strategy(f.message_type, depth + 1)
        else:
            value = _scalar(f)
        if f.is_repeated:
            cap = field_policy(f).max_items
            value = st.lists(value, max_size=3) if not cap or depth > 0 else st.one_of(
                st.lists(value, max_size=3), st.lists(value, min_size=cap + 1, max_size=cap + 1)
                if f.type != FD.TYPE_MESSAGE else st.lists(value, max_size=3))
        optional[f.name] = value
    return st.fixed_dictionaries({}, optional=optional)


def _is_map(f: descriptor.FieldDescriptor) -> bool:
    return f.type == FD.TYPE_MESSAGE and f.message_type.GetOptions().map_entry


def fill(msg: message.Message, data: dict[str, Any]) -> message.Message:
    for name, value in data.items():
        f = msg.DESCRIPTOR.fields_by_name[name]
        if _is_map(f):
            getattr(msg, name).update(value)
        elif f.type == FD.TYPE_MESSAGE:
            if f.is_repeated:
                for item in value:
                    fill(getattr(msg, name).add(), item)
            else:
                sub = getattr(msg, name)
                sub.SetInParent()
                fill(sub, value)
        elif f.is_repeated:
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)
    return msg


@pytest.mark.parametrize("m", methods(), ids=lambda m: m.name)
def test_grpc_fuzz(m: MethodInfo, channel: grpc.Channel, tenant: Tenant) -> None:
    call = channel.unary_unary(m.grpc_path, request_serializer=m.request_cls.SerializeToString,
                               response_deserializer=m.response_cls.FromString)
    metadata = [("x-api-key", tenant.admin_key)]

    @settings(max_examples=MAX_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])
    @given(data=message_strategy(m.request_cls.DESCRIPTOR),
           include_unregistered=st.sampled_from([None, "true", "false", "maybe"]),
           idempotency_key=st.one_of(st.none(), st.text(alphabet="abcdefXYZ0123-_", min_size=1, max_size=80)))
    def run(data: dict[str, Any], include_unregistered: str | None, idempotency_key: str | None) -> None:
        request = fill(m.request_cls(), data)
        md = list(metadata)
        if include_unregistered is not None:
            md.append(("x-include-unregistered", include_unregistered))
        if idempotency_key is not None:
            md.append(("idempotency-key", idempotency_key))
        try:
            response = call(request, metadata=md, timeout=30)
        except grpc.RpcError as e:
            code = e.code()  # type: ignore[attr-defined]
            assert code in DOCUMENTED, f"{m.name} answered {code}: {e.details()} for {request}"  # type: ignore[attr-defined]
            assert "Traceback" not in (e.details() or "")  # type: ignore[attr-defined]
            return
        assert isinstance(response, m.response_cls)

    run()
