"""JSON <-> protobuf for the REST gateway, driven by the message descriptors.

Parsing (JSON -> message):
- every error carries a JSON pointer; all errors of a body are reported at once;
- unknown properties and read-only (``OUTPUT_ONLY``) properties are rejected;
- wrong types are rejected (no silent coercion: ``"5"`` is not an integer);
- ``null`` leaves a field unset; the key is still recorded as present, so an
  update's field mask can tell "sent as null" from "omitted";
- ``google.protobuf.Timestamp`` accepts RFC 3339 date-times (and plain dates,
  read as midnight UTC);
- items of a ``per_item_errors`` repeated field that cannot be parsed are
  reported for that item and the request goes on.

Rendering (message -> JSON):
- field names are the proto names (the spec's snake_case);
- a field with presence (proto3 ``optional``, message fields) that is unset is
  ``null``, never missing; ``null_when_empty`` repeated fields render ``[]`` as ``null``;
- timestamps are RFC 3339 in UTC with a ``Z``.
"""

from __future__ import annotations

import keyword
import re
import threading
from collections.abc import Callable
from datetime import date, datetime, timezone
from functools import cache, lru_cache
from typing import Any

from google.protobuf import descriptor, json_format, message, struct_pb2, timestamp_pb2

from levy.app import error_objects
from levy.app.registry import field_policy, is_output_only
from levy.domain.errors import ErrorItem, ValidationFailed

FD = descriptor.FieldDescriptor
_INT_TYPES = {FD.TYPE_INT32, FD.TYPE_INT64, FD.TYPE_SINT32, FD.TYPE_SINT64, FD.TYPE_UINT32, FD.TYPE_UINT64,
              FD.TYPE_FIXED32, FD.TYPE_FIXED64, FD.TYPE_SFIXED32, FD.TYPE_SFIXED64}
_INT_RANGE = {
    FD.TYPE_INT32: (-(2**31), 2**31 - 1), FD.TYPE_SINT32: (-(2**31), 2**31 - 1), FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FD.TYPE_UINT32: (0, 2**32 - 1), FD.TYPE_FIXED32: (0, 2**32 - 1),
    FD.TYPE_INT64: (-(2**63), 2**63 - 1), FD.TYPE_SINT64: (-(2**63), 2**63 - 1), FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FD.TYPE_UINT64: (0, 2**64 - 1), FD.TYPE_FIXED64: (0, 2**64 - 1),
}
_JSON_TYPE = {FD.TYPE_STRING: "a string", FD.TYPE_BOOL: "a boolean", FD.TYPE_DOUBLE: "a number", FD.TYPE_FLOAT: "a number"}


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class ParseResult:
    __slots__ = ("errors", "item_errors", "present")

    def __init__(self) -> None:
        self.errors: list[ValidationFailed] = []
        self.item_errors: dict[int, list[ErrorItem]] = {}
        self.present: list[str] = []  # top-level keys present in the parsed object


def parse_datetime(value: str) -> datetime | None:
    try:
        if len(value) == 10:
            d = date.fromisoformat(value)
            return datetime(d.year, d.month, d.day, tzinfo=timezone.utc)
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    try:
        # An offset can carry the instant out of years 1..9999 (0001-01-01T00:00:00+01:00): not a valid instant.
        return dt.astimezone(timezone.utc)
    except OverflowError:
        return None


def parse_into(msg: message.Message, data: Any, pointer: str, result: ParseResult, *, top: bool = False,
               exclude: frozenset[str] = frozenset()) -> None:
    """Fill ``msg`` from the JSON value ``data``; problems go to ``result``."""
    if not isinstance(data, dict):
        result.errors.append(
            ValidationFailed(f"Expected an object, got {_type_name(data)}.", pointer=pointer or "", input=data,
                             type="model_type")
        )
        return
    fields = msg.DESCRIPTOR.fields_by_name
    for key, value in data.items():
        ptr = f"{pointer}/{_escape(key)}"
        f = fields.get(key)
        if f is None or key in exclude:
            result.errors.append(
                ValidationFailed(f"Unknown property '{key}'.", pointer=ptr, input=value, type="extra_forbidden")
            )
            continue
        if is_output_only(f):
            result.errors.append(
                ValidationFailed(f"'{key}' is read-only and cannot be set.", pointer=ptr, input=value,
                                 type="read_only")
            )
            continue
        if top:
            result.present.append(key)
        if value is None:
            continue
        if is_map(f):
            _parse_map(msg, f, value, ptr, result)
        elif f.is_repeated:
            _parse_repeated(msg, f, value, ptr, result)
        elif f.type == FD.TYPE_MESSAGE:
            _parse_message_field(msg, f, value, ptr, result)
        else:
            _parse_scalar(msg, f, value, ptr, result, setter=lambda v, m=msg, n=f.name: setattr(m, n, v))


def is_map(f: FD) -> bool:
    """A ``map<K, V>`` field (a repeated entry message marked ``map_entry``)."""
    return f.type == FD.TYPE_MESSAGE and f.message_type.GetOptions().map_entry


def _wrong_type(result: ParseResult, f: FD, value: Any, ptr: str, expected: str, error_type: str) -> None:
    """The error of a value of field ``f`` that is not ``expected`` ("an object", "an array")."""
    result.errors.append(ValidationFailed(f"'{f.name}' must be {expected}, got {_type_name(value)}.", pointer=ptr,
                                          input=value, type=error_type))


def _parse_map(msg: message.Message, f: FD, value: Any, ptr: str, result: ParseResult) -> None:
    """A JSON object into a ``map<string, scalar>`` field (each value checked like a scalar field,
    pointer ``/field/<key>``)."""
    if not isinstance(value, dict):
        return _wrong_type(result, f, value, ptr, "an object", "dict_type")
    container = getattr(msg, f.name)
    value_field = f.message_type.fields_by_name["value"]
    for key, item in value.items():
        _parse_scalar(msg, value_field, item, f"{ptr}/{_escape(key)}", result,
                      setter=lambda v, k=key: container.__setitem__(k, v))


def _parse_repeated(msg: message.Message, f: FD, value: Any, ptr: str, result: ParseResult) -> None:
    if not isinstance(value, list):
        return _wrong_type(result, f, value, ptr, "an array", "list_type")
    container = getattr(msg, f.name)
    per_item = field_policy(f).per_item_errors
    max_items = field_policy(f).max_items
    if max_items and len(value) > max_items:
        result.errors.append(
            ValidationFailed(f"'{f.name}' has {len(value)} items; the maximum is {max_items}.", pointer=ptr,
                             type="too_long")
        )
        return
    is_msg = f.type == FD.TYPE_MESSAGE
    plain = _item_plan(f.message_type) if is_msg else None
    for i, item in enumerate(value):
        if not is_msg:
            _parse_scalar(msg, f, item, f"{ptr}/{i}", result, setter=container.append)
            continue
        sub = container.add()
        if plain is not None and type(item) is dict:
            if _fill_plain(sub, item, plain):
                continue
            sub.Clear()  # not plain: parsed again below, which reports exactly what is wrong
        iptr = f"{ptr}/{i}"
        if per_item:
            sub_result = ParseResult()
            _fill_message(sub, item, iptr, sub_result)
            if sub_result.errors:
                result.item_errors[i] = [it for e in sub_result.errors for it in e.items]
        else:
            _fill_message(sub, item, iptr, result)


# The items of a repeated message field (a batch's 1000 customers) are usually plain: an
# object of known, writable properties holding strings, booleans, RFC 3339 timestamps or null.
# ``_fill_plain`` sets such an item from a per-message plan, without building pointers or
# error lists; at anything else (an unknown or read-only key, a wrong type, a bad timestamp)
# it gives up, and the item is parsed again from scratch by ``parse_into``, which reports
# the errors. Messages with writable fields of other kinds are always parsed by ``parse_into``.
_STR, _BOOL, _TS = range(3)


@cache
def _item_plan(desc: descriptor.Descriptor) -> dict[str, tuple[int, str]] | None:
    """JSON key -> (kind, field name) of each writable field, or None when some writable
    field is of a kind ``_fill_plain`` leaves to ``parse_into`` (or ``desc`` is special)."""
    if desc.full_name in _SPECIAL:
        return None
    plan: dict[str, tuple[int, str]] = {}
    for f in desc.fields:
        if is_output_only(f):
            continue
        if f.is_repeated:
            return None
        if f.type == FD.TYPE_STRING:
            plan[f.name] = (_STR, f.name)
        elif f.type == FD.TYPE_BOOL:
            plan[f.name] = (_BOOL, f.name)
        elif f.type == FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.Timestamp":
            plan[f.name] = (_TS, f.name)
        else:
            return None
    return plan


def _fill_plain(sub: message.Message, item: dict[str, Any], plan: dict[str, tuple[int, str]]) -> bool:
    """Set ``item`` into ``sub`` when every key is planned and every value valid; False
    (``sub`` partly set) at the first thing ``parse_into`` must look at."""
    for key, value in item.items():
        step = plan.get(key)
        if step is None:
            return False
        if value is None:
            continue
        kind, name = step
        if kind == _STR:
            if type(value) is not str:
                return False
            setattr(sub, name, value)
        elif kind == _TS:
            parts = _instant(value) if type(value) is str else None
            if parts is None:
                return False
            ts = getattr(sub, name)
            ts.seconds, ts.nanos = parts
        else:  # _BOOL
            if type(value) is not bool:
                return False
            setattr(sub, name, value)
    return True


def _instant(text: str) -> tuple[int, int] | None:
    """(seconds, nanos) of an RFC 3339 date-time (or a date: midnight UTC), or None."""
    if len(text) > 64:  # not cached: the cache is for the few instants a batch repeats
        return _instant_parts(text)
    return _cached_instant(text)


def _instant_parts(text: str) -> tuple[int, int] | None:
    dt = parse_datetime(text)
    if dt is None:
        return None
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(dt.astimezone(timezone.utc))
    return ts.seconds, ts.nanos


_cached_instant = lru_cache(maxsize=4096)(_instant_parts)


def _fill_message(sub: message.Message, item: Any, ptr: str, result: ParseResult) -> None:
    full = sub.DESCRIPTOR.full_name
    if full in _SPECIAL:
        _SPECIAL[full](sub, item, ptr, result)
    else:
        parse_into(sub, item, ptr, result)


def _parse_message_field(msg: message.Message, f: FD, value: Any, ptr: str, result: ParseResult) -> None:
    sub = getattr(msg, f.name)
    _fill_message(sub, value, ptr, result)
    if not sub.ListFields() and f.message_type.full_name not in _SPECIAL:
        sub.SetInParent()  # `{}` is present, not null


def _timestamp(sub: message.Message, value: Any, ptr: str, result: ParseResult) -> None:
    parts = _instant(value) if isinstance(value, str) else None
    if parts is None:
        result.errors.append(
            ValidationFailed(
                f"Expected an ISO 8601 date-time such as '2026-01-31T12:00:00Z', got {value!r}.",
                pointer=ptr, input=value, type="datetime_parsing",
            )
        )
        return
    assert isinstance(sub, timestamp_pb2.Timestamp)
    sub.seconds, sub.nanos = parts


def _struct(sub: message.Message, value: Any, ptr: str, result: ParseResult) -> None:
    if not isinstance(value, dict):
        result.errors.append(ValidationFailed("Expected an object.", pointer=ptr, input=value, type="dict_type"))
        return
    assert isinstance(sub, struct_pb2.Struct)
    sub.update(value)


_SPECIAL: dict[str, Callable[[message.Message, Any, str, ParseResult], None]] = {
    "google.protobuf.Timestamp": _timestamp,
    "google.protobuf.Struct": _struct,
}


def _parse_scalar(msg: message.Message, f: FD, value: Any, ptr: str, result: ParseResult,
                  setter: Callable[[Any], None]) -> None:
    t = f.type
    ok = False
    expected = "a valid value"
    if t == FD.TYPE_STRING:
        ok = isinstance(value, str)
    elif t == FD.TYPE_BOOL:
        ok = isinstance(value, bool)
    elif t in _INT_TYPES:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok:
            lo, hi = _INT_RANGE[t]
            if not lo <= value <= hi:
                result.errors.append(
                    ValidationFailed(f"'{f.name}' is out of range.", pointer=ptr, input=value, type="int_range")
                )
                return
        expected = "an integer"
    elif t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif t == FD.TYPE_ENUM:
        ok = isinstance(value, str) and value in f.enum_type.values_by_name
        expected = "one of " + ", ".join(f.enum_type.values_by_name)
    if not ok:
        exp = _JSON_TYPE.get(t) or (expected if t in _INT_TYPES or t == FD.TYPE_ENUM else "a valid value")
        result.errors.append(
            ValidationFailed(f"'{f.name}' must be {exp}, got {_type_name(value)}.", pointer=ptr, input=value,
                             type=_pydantic_type(t))
        )
        return
    if t == FD.TYPE_ENUM:
        value = f.enum_type.values_by_name[value].number
    setter(value)


def _pydantic_type(t: int) -> str:
    return {FD.TYPE_STRING: "string_type", FD.TYPE_BOOL: "bool_type", FD.TYPE_DOUBLE: "float_type",
            FD.TYPE_FLOAT: "float_type"}.get(t, "int_type" if t in _INT_TYPES else "value_error")


_QUERY_INT = re.compile(r"-?[0-9]{1,20}")


def parse_query_value(f: FD, raw: str, name: str) -> Any:
    """A query-string value for a scalar request field."""
    t = f.type
    if t == FD.TYPE_STRING:
        return raw
    if t in _INT_TYPES:
        # ASCII digits only: int() would also take "1_000", " 5" and other scripts' digits.
        if not _QUERY_INT.fullmatch(raw):
            raise ValidationFailed(f"Query parameter '{name}' must be an integer, got {raw!r}.", parameter=name,
                                   input=raw, type="int_parsing")
        value = int(raw)
        lo, hi = _INT_RANGE[t]
        if not lo <= value <= hi:
            raise ValidationFailed(f"Query parameter '{name}' is out of range.", parameter=name, input=raw,
                                   type="int_range")
        return value
    if t == FD.TYPE_BOOL:
        if raw in ("true", "false"):
            return raw == "true"
        raise ValidationFailed(f"Query parameter '{name}' must be 'true' or 'false'.", parameter=name, input=raw,
                               type="bool_parsing")
    raise ValidationFailed(f"Query parameter '{name}' is not supported.", parameter=name)  # pragma: no cover


# ---------------------------------------------------------------- rendering


def format_timestamp(ts: timestamp_pb2.Timestamp) -> str:
    return _format_instant(ts.seconds, ts.nanos)


@lru_cache(maxsize=4096)
def _format_instant(seconds: int, nanos: int) -> str:
    """RFC 3339 UTC text of an instant (cached: a list or batch repeats a few instants)."""
    dt = datetime.fromtimestamp(seconds, tz=timezone.utc)
    # Not strftime("%Y"): it drops the leading zeros of years before 1000 ("956-02-10").
    base = f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    if nanos:
        return f"{base}.{nanos // 1000:06d}Z"
    return base + "Z"


def to_json(msg: message.Message) -> dict[str, Any]:
    return _renderer(msg.DESCRIPTOR)(msg)


# Rendering is compiled: one generated function per message type returns the whole object
# as one dict display, reading each field by attribute in descriptor order and calling the
# renderers of its message fields directly. A batch response renders 1000 customers, where a
# walk over a per-field plan (loop, tuple unpacking, dispatch on the field kind) cost a fifth
# of the rendering (6.0 -> 4.8 ms). Measured with ``python -m bench.fast_paths``:
# 4.2 ms against 13.4 ms for the plain field walk (tests/unit/foundation/test_codec_fast_paths.py)
# on a 1000-customer batch response, about 12% of the ~70 ms of server CPU of a new batch upsert:
# kept. The source is built from the descriptors only.
_RENDER_NAMESPACE: dict[str, Any] = {"_timestamp": format_timestamp, "_struct": json_format.MessageToDict,
                                     "_error_object": error_objects.message_json}
# Messages rendered by their own function instead of field by field.
_OWN_RENDERER = {"google.protobuf.Timestamp": "_timestamp", "google.protobuf.Struct": "_struct",
            "levy.v1.ErrorObject": "_error_object"}  # the spec's shape: source and parameter only when set
_RENDERER_NAMES: dict[str, str] = {}  # message full name -> function name in _RENDER_NAMESPACE
_RENDER_LOCK = threading.RLock()


@cache
def _renderer(desc: descriptor.Descriptor) -> Callable[[message.Message], dict[str, Any]]:
    with _RENDER_LOCK:
        return _RENDER_NAMESPACE[_renderer_name(desc)]  # type: ignore[no-any-return]


def _renderer_name(desc: descriptor.Descriptor) -> str:
    """The function rendering ``desc``, generated on first use (its message fields'
    renderers first; a name is taken before its source is built, for recursive types)."""
    name = _RENDERER_NAMES.get(desc.full_name)
    if name is None:
        name = _RENDERER_NAMES[desc.full_name] = f"render_{len(_RENDERER_NAMES)}"
        exec(_renderer_source(desc, name), _RENDER_NAMESPACE)
    return name


def _renderer_source(desc: descriptor.Descriptor, name: str) -> str:
    """Rules: proto field names as keys; an unset field with presence is null; repeated
    fields are lists (``null_when_empty``: empty is null); timestamps are RFC 3339 text."""
    lines = [f"def {name}(m):", "    return {"]
    for f in desc.fields:
        read = f"m.{f.name}" if f.name.isidentifier() and not keyword.iskeyword(f.name) else f"getattr(m, {f.name!r})"
        render = ""
        if is_map(f):  # map<string, scalar>: a JSON object
            lines.append(f"        {f.name!r}: dict({read}),")
            continue
        if f.type == FD.TYPE_MESSAGE:
            render = _OWN_RENDERER.get(f.message_type.full_name) or _renderer_name(f.message_type)
        if f.is_repeated:
            value = f"[{render}(v) for v in {read}]" if render else f"list({read})"
            if field_policy(f).null_when_empty:
                value = f"({value} or None)"
        elif f.has_presence:
            value = f"({render}({read}) if m.HasField({f.name!r}) else None)" if render else \
                f"({read} if m.HasField({f.name!r}) else None)"
        else:
            value = f"{render}({read})" if render else read
        lines.append(f"        {f.name!r}: {value},")
    lines.append("    }")
    return "\n".join(lines) + "\n"
