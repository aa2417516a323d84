"""Field limits declared in the protos (``levy.v1.field_policy``), checked for
both transports on every request message: ``max_length``, ``min_length``
(strings, in characters) and ``max_items`` (repeated fields).

Every string also refuses NUL characters (PostgreSQL cannot store them; found
by the gRPC fuzzer as 500s), and every ``google.protobuf.Timestamp`` must be a
valid one (years 1..9999, nanos 0..999,999,999; gRPC callers can send any).

Items of a ``per_item_errors`` field that break a limit are reported per item
(for the batch upsert) instead of failing the request.

How: a walk over the fields each message has set (``ListFields()``), with, per
message type, a plan made once from its descriptor (which fields have something to
check, and their limits). Errors come in this order:

- fields in field-number order (``ListFields``' order), then the strings without
  presence that have a ``min_length`` and are empty ("unset"), in declaration order;
- a field is looked at only when ``ListFields`` lists it: a singular message or
  Timestamp only when set, a string only when non-empty unless it has presence (an
  optional string set to ``""`` is blank);
- a repeated field over ``max_items`` is one error and its items are not checked;
- ``google.protobuf.*`` messages other than Timestamp are not walked.

The walk is used rather than a checker compiled to Python source per message type:
measured with ``python -m bench.fast_paths`` (2026-11-24), the compiled
one took 9.4 us against 20.5 us for the walk on a 3-line calculation request, 11 us
or about 1.7% of the 660 us of server CPU of a gRPC calculation, within the noise
of the calculation benchmarks (docs/performance.md, "Fast paths, reviewed"), for
300 lines of code generation. The walk is what tests/unit/test_constraints.py pins.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from google.protobuf import descriptor, message

from levy.app.registry import field_policy
from levy.domain.errors import ErrorItem, ValidationFailed

FD = descriptor.FieldDescriptor

_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # 0001-01-01 .. 9999-12-31T23:59:59Z
_MAX_NANOS = 999_999_999


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
            value = getattr(request, f.name)
            if "\x00" in value:
                errors.append(_string_error(value, f.name, 0, 0, f"/{f.name}"))
    if errors:
        raise ValidationFailed.many(errors)


# The plan of a message type: what each of its fields needs.

class _Check(NamedTuple):
    kind: str  # "string", "timestamp", "message" (walked into), "map" (string -> string) or "count" (max_items only)
    max_length: int
    min_length: int
    max_items: int
    per_item_errors: bool


class _Plan(NamedTuple):
    fields: dict[FD, _Check]
    # Strings without presence, with a min_length: blank when empty (ListFields omits them).
    blank_when_unset: tuple[tuple[str, int], ...]


@cache
def _plan(desc: descriptor.Descriptor) -> _Plan:
    fields: dict[FD, _Check] = {}
    for f in desc.fields:
        p = field_policy(f)
        if f.type == FD.TYPE_STRING:
            kind = "string"
        elif _is_timestamp(f):
            kind = "timestamp"
        elif _is_walked(f) and _has_checks(f.message_type):
            if f.message_type.GetOptions().map_entry:
                # ``ListFields`` gives a map as a mapping, not as entry messages. A map<string,
                # string> is checked as strings (keys for NUL, values with the field's limits, at
                # ``/field/<key>``); no proto has another map with limits: say what to decide.
                entry = f.message_type.fields_by_name
                if entry["key"].type != FD.TYPE_STRING or entry["value"].type != FD.TYPE_STRING:
                    raise NotImplementedError(f"{f.full_name}: a map field whose entries have limits to check")
                kind = "map"
            else:
                kind = "message"
        elif p.max_items:
            kind = "count"
        else:
            continue
        fields[f] = _Check(kind, p.max_length, p.min_length, p.max_items, p.per_item_errors)
    blank = tuple((f.name, p.min_length) for f in desc.fields
                  if f.type == FD.TYPE_STRING and not f.is_repeated and not f.has_presence
                  and (p := field_policy(f)).min_length)
    return _Plan(fields, blank)


def _is_timestamp(f: FD) -> bool:
    return f.type == FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.Timestamp"


def _is_walked(f: FD) -> bool:
    """Our own messages are walked; ``google.protobuf.*`` ones (wrappers, Struct, FieldMask) are not."""
    return f.type == FD.TYPE_MESSAGE and not f.message_type.full_name.startswith("google.protobuf.")


@cache
def _has_checks(desc: descriptor.Descriptor) -> bool:
    """Some field of ``desc``, or of a message reachable from it, has something to
    check (a string, a Timestamp, a ``max_items``). A search rather than a recursion,
    so that a message that contains itself terminates."""
    seen: set[descriptor.Descriptor] = set()
    todo = [desc]
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        for f in d.fields:
            if f.type == FD.TYPE_STRING or _is_timestamp(f) or field_policy(f).max_items:
                return True
            if _is_walked(f):
                todo.append(f.message_type)
    return False


# The walk.

def _walk(msg: message.Message, ptr: str, errors: list[ValidationFailed],
          item_errors: dict[int, list[ErrorItem]]) -> None:
    plan = _plan(msg.DESCRIPTOR)
    for f, value in msg.ListFields():
        c = plan.fields.get(f)
        if c is None:
            continue
        here = f"{ptr}/{f.name}"
        if c.kind == "map":
            for k, v in value.items():
                if "\x00" in k:
                    errors.append(_string_error(k, f.name, 0, 0, here))
                elif _breaks(v, c):
                    errors.append(_string_error(v, f.name, c.max_length, c.min_length, f"{here}/{k}"))
        elif not f.is_repeated:
            if c.kind == "string":
                if _breaks(value, c):
                    errors.append(_string_error(value, f.name, c.max_length, c.min_length, here))
            elif c.kind == "timestamp":
                if not (_MIN_SECONDS <= value.seconds <= _MAX_SECONDS and 0 <= value.nanos <= _MAX_NANOS):
                    errors.append(_timestamp_error(value, f.name, here))
            elif c.kind == "message":
                _walk(value, here, errors, item_errors)
        elif c.max_items and len(value) > c.max_items:
            errors.append(ValidationFailed(f"'{f.name}' has {len(value)} items; the maximum is {c.max_items}.",
                                           pointer=here, type="too_long"))
        elif c.kind == "string":
            for i, v in enumerate(value):
                if _breaks(v, c):
                    errors.append(_string_error(v, f.name, c.max_length, c.min_length, f"{here}/{i}"))
        elif c.kind == "message":
            for i, v in enumerate(value):
                if c.per_item_errors:  # each item's errors go to ``item_errors[i]``, not the request's
                    mine: list[ValidationFailed] = []
                    _walk(v, f"{here}/{i}", mine, item_errors)
                    if mine:
                        item_errors.setdefault(i, []).extend(it for e in mine for it in e.items)
                else:
                    _walk(v, f"{here}/{i}", errors, item_errors)
        # The items of a repeated Timestamp are not checked (no request has one; the walk
        # never did): only their count.
    for name, min_length in plan.blank_when_unset:
        if getattr(msg, name) == "":
            errors.append(_string_error("", name, 0, min_length, f"{ptr}/{name}"))


def _breaks(value: str, c: _Check) -> bool:
    return ("\x00" in value or bool(c.max_length and len(value) > c.max_length)
            or bool(c.min_length and len(value.strip()) < c.min_length))


def _string_error(value: str, name: str, max_len: int, min_len: int, ptr: str) -> ValidationFailed:
    """The error of a string known to break a rule: NUL first, then too long, else blank."""
    if "\x00" in value:
        return ValidationFailed(f"'{name}' contains a NUL character.", pointer=ptr, input=value.replace("\x00", ""),
                                type="string_pattern_mismatch")
    if max_len and len(value) > max_len:
        return ValidationFailed(
            f"'{name}' is {len(value)} characters long; the maximum is {max_len}.", pointer=ptr, input=value,
            type="string_too_long",
        )
    return ValidationFailed(f"'{name}' cannot be blank.", pointer=ptr, input=value, type="string_too_short")


def _timestamp_error(ts: message.Message, name: str, ptr: str) -> ValidationFailed:
    return ValidationFailed(
        f"'{name}' is not a valid timestamp (years 1 to 9999, nanos 0 to 999999999).",
        pointer=ptr, input={"seconds": ts.seconds, "nanos": ts.nanos}, type="datetime_parsing",
    )
