"""Field limits declared in the protos (``levy.v1.field_policy``), checked for
both transports on every request message: ``max_length``, ``min_length``
(strings, in characters) and ``max_items`` (repeated fields).

Every string also refuses NUL characters (PostgreSQL cannot store them; found
by the gRPC fuzzer as 500s), and every ``google.protobuf.Timestamp`` must be a
valid one (years 1..9999, nanos 0..999,999,999; gRPC callers can send any).

Items of a ``per_item_errors`` field that break a limit are reported per item
(for the batch upsert) instead of failing the request.
"""

from __future__ import annotations

from functools import cache

from google.protobuf import descriptor, message

from levy.app.registry import field_policy
from levy.domain.errors import ErrorItem, ValidationFailed

FD = descriptor.FieldDescriptor


@cache
def _plan(desc: descriptor.Descriptor) -> tuple[tuple[FD, int, int, int, bool, bool], ...]:
    """Fields worth visiting: (field, max_len, min_len, max_items, per_item, is_msg)."""
    out = []
    for f in desc.fields:
        p = field_policy(f)
        is_msg = f.type == FD.TYPE_MESSAGE and not f.message_type.full_name.startswith("google.protobuf.")
        if (p.max_length or p.min_length or p.max_items or p.per_item_errors or f.type == FD.TYPE_STRING
                or _is_timestamp(f) or (is_msg and _has_checks(f.message_type))):
            out.append((f, p.max_length, p.min_length, p.max_items, p.per_item_errors, is_msg))
    return tuple(out)


def _is_timestamp(f: FD) -> bool:
    return f.type == FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.Timestamp"


_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # 0001-01-01 .. 9999-12-31T23:59:59Z


def _timestamp_errors(ts: message.Message, f: FD, ptr: str) -> ValidationFailed | None:
    seconds, nanos = ts.seconds, ts.nanos  # type: ignore[attr-defined]
    if _MIN_SECONDS <= seconds <= _MAX_SECONDS and 0 <= nanos <= 999_999_999:
        return None
    return ValidationFailed(
        f"'{f.name}' is not a valid timestamp (years 1 to 9999, nanos 0 to 999999999).",
        pointer=ptr, input={"seconds": seconds, "nanos": nanos}, type="datetime_parsing",
    )


@cache
def _has_checks(desc: descriptor.Descriptor) -> bool:
    return bool(_plan(desc))


def check(msg: message.Message, item_errors: dict[int, list[ErrorItem]], pointer: str = "") -> None:
    errors: list[ValidationFailed] = []
    _walk(msg, pointer, errors, item_errors)
    if errors:
        raise ValidationFailed.many(errors)


def check_outside_body(request: message.Message, body: str) -> None:
    """The request's own string fields beside a body field (the path ids of
    ``PATCH /customers/{customer_id}``): no NUL characters."""
    errors = []
    for f in request.DESCRIPTOR.fields:
        if f.name != body and f.type == FD.TYPE_STRING and not f.is_repeated:
            e = _string_errors(getattr(request, f.name), f, 0, 0, f"/{f.name}")
            if e:
                errors.append(e)
    if errors:
        raise ValidationFailed.many(errors)


def _string_errors(value: str, f: FD, max_len: int, min_len: int, ptr: str) -> ValidationFailed | None:
    if "\x00" in value:
        return ValidationFailed(f"'{f.name}' contains a NUL character.", pointer=ptr, input=value.replace("\x00", ""),
                                type="string_pattern_mismatch")
    if max_len and len(value) > max_len:
        return ValidationFailed(
            f"'{f.name}' is {len(value)} characters long; the maximum is {max_len}.", pointer=ptr, input=value,
            type="string_too_long",
        )
    if min_len and len(value.strip()) < min_len:
        return ValidationFailed(f"'{f.name}' cannot be blank.", pointer=ptr, input=value, type="string_too_short")
    return None


def _walk(msg: message.Message, ptr: str, errors: list[ValidationFailed], item_errors: dict[int, list[ErrorItem]]) -> None:
    for f, max_len, min_len, max_items, per_item, is_msg in _plan(msg.DESCRIPTOR):
        fptr = f"{ptr}/{f.name}"
        if f.is_repeated:
            values = getattr(msg, f.name)
            if max_items and len(values) > max_items:
                errors.append(
                    ValidationFailed(
                        f"'{f.name}' has {len(values)} items; the maximum is {max_items}.",
                        pointer=fptr, type="too_long",
                    )
                )
                continue
            for i, v in enumerate(values):
                iptr = f"{fptr}/{i}"
                if is_msg:
                    if per_item:
                        sub: list[ValidationFailed] = []
                        _walk(v, iptr, sub, item_errors)
                        if sub:
                            item_errors.setdefault(i, []).extend(it for e in sub for it in e.items)
                    else:
                        _walk(v, iptr, errors, item_errors)
                elif f.type == FD.TYPE_STRING:
                    e = _string_errors(v, f, max_len, min_len, iptr)
                    if e:
                        errors.append(e)
        elif is_msg:
            if msg.HasField(f.name):
                _walk(getattr(msg, f.name), fptr, errors, item_errors)
        elif _is_timestamp(f):
            if msg.HasField(f.name):
                e = _timestamp_errors(getattr(msg, f.name), f, fptr)
                if e:
                    errors.append(e)
        elif f.type == FD.TYPE_STRING:
            if f.has_presence and not msg.HasField(f.name):
                continue
            e = _string_errors(getattr(msg, f.name), f, max_len, min_len, fptr)
            if e:
                errors.append(e)
