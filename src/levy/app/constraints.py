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


# What to check of a field: (kind, max_len, min_len, max_items, per_item).
_STRING, _TIMESTAMP, _MESSAGE = 1, 2, 3
_Spec = tuple[int, int, int, int, bool]


@cache
def _plan(desc: descriptor.Descriptor) -> dict[FD, _Spec]:
    """The fields worth visiting, by descriptor (``ListFields`` gives the set ones)."""
    out: dict[FD, _Spec] = {}
    for f in desc.fields:
        p = field_policy(f)
        is_msg = f.type == FD.TYPE_MESSAGE and not f.message_type.full_name.startswith("google.protobuf.")
        if f.type == FD.TYPE_STRING:
            kind = _STRING
        elif _is_timestamp(f):
            kind = _TIMESTAMP
        elif is_msg and _has_checks(f.message_type):
            kind = _MESSAGE
        elif p.max_items:
            kind = 0  # only the item count
        else:
            continue
        out[f] = (kind, p.max_length, p.min_length, p.max_items, p.per_item_errors)
    return out


@cache
def _unset_checks(desc: descriptor.Descriptor) -> tuple[tuple[FD, int], ...]:
    """Strings without presence and with a minimum length: blank when unset, so
    checked even though ``ListFields`` leaves them out."""
    return tuple((f, p.min_length) for f in desc.fields
                 if f.type == FD.TYPE_STRING and not f.is_repeated and not f.has_presence
                 and (p := field_policy(f)).min_length)


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
    plan = _plan(msg.DESCRIPTOR)
    for f, value in msg.ListFields():
        spec = plan.get(f)
        if spec is None:
            continue
        kind, max_len, min_len, max_items, per_item = spec
        if f.is_repeated:
            if max_items and len(value) > max_items:
                errors.append(
                    ValidationFailed(
                        f"'{f.name}' has {len(value)} items; the maximum is {max_items}.",
                        pointer=f"{ptr}/{f.name}", type="too_long",
                    )
                )
                continue
            if kind == _MESSAGE:
                for i, v in enumerate(value):
                    if per_item:
                        sub: list[ValidationFailed] = []
                        _walk(v, f"{ptr}/{f.name}/{i}", sub, item_errors)
                        if sub:
                            item_errors.setdefault(i, []).extend(it for e in sub for it in e.items)
                    else:
                        _walk(v, f"{ptr}/{f.name}/{i}", errors, item_errors)
            elif kind == _STRING:
                for i, v in enumerate(value):
                    if "\x00" in v or (max_len and len(v) > max_len) or min_len:
                        e = _string_errors(v, f, max_len, min_len, f"{ptr}/{f.name}/{i}")
                        if e:
                            errors.append(e)
        elif kind == _STRING:
            if "\x00" in value or (max_len and len(value) > max_len) or min_len:
                e = _string_errors(value, f, max_len, min_len, f"{ptr}/{f.name}")
                if e:
                    errors.append(e)
        elif kind == _MESSAGE:
            _walk(value, f"{ptr}/{f.name}", errors, item_errors)
        elif kind == _TIMESTAMP:
            e = _timestamp_errors(value, f, f"{ptr}/{f.name}")
            if e:
                errors.append(e)
    for f, min_len in _unset_checks(msg.DESCRIPTOR):
        value = getattr(msg, f.name)
        if value == "":  # set values were checked above
            errors.append(ValidationFailed(f"'{f.name}' cannot be blank.", pointer=f"{ptr}/{f.name}", input=value,
                                           type="string_too_short"))
