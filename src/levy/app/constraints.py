"""Field limits declared in the protos (``levy.v1.field_policy``), checked for
both transports on every request message: ``max_length``, ``min_length``
(strings, in characters) and ``max_items`` (repeated fields).

Every string also refuses NUL characters (PostgreSQL cannot store them; found
by the gRPC fuzzer as 500s), and every ``google.protobuf.Timestamp`` must be a
valid one (years 1..9999, nanos 0..999,999,999; gRPC callers can send any).

Items of a ``per_item_errors`` field that break a limit are reported per item
(for the batch upsert) instead of failing the request.

How: this runs on every request, so each message type gets, once, a checker
compiled from its descriptor (Python source generated from the fields and their
``field_policy``, then ``exec``). A generic walk over ``ListFields()`` cost about
24 µs of CPU for a three-line calculation, most of it building the (field, value)
pairs and dispatching on them; the compiled checker (about 7.5 µs) reads only the
fields that have a check, as plain attributes, with the limits as literals,
sub-messages inlined, and builds pointers and errors only when something is
wrong. What is left is mostly the attribute reads themselves. Measured again for
issue 23 (``python -m bench.fast_paths``, 2026-11-24): 9.4 us against 20.5 us for
the walk on a 3-line calculation request, 11 us saved per request, about 1.7% of
the 660 us of server CPU of a gRPC calculation: kept for now, and the first
candidate to fold back into the walk (docs/performance.md, "Fast paths,
reviewed"). What is checked, and in which order errors come, is exactly what
that walk did (tests/unit/test_constraints_compiled.py keeps the walk and
compares them):

- fields in field-number order (``ListFields``' order), then the strings without
  presence that have a ``min_length`` and are empty ("unset"), in declaration order;
- a field is looked at only when ``ListFields`` would list it: a singular message
  or Timestamp only when set, a string only when non-empty unless it has presence
  and a ``min_length`` (an optional string set to ``""`` is blank). Presence is
  tested with ``"name" in msg`` (``HasField`` without the method call: half the
  cost), and only where reading an unset field would not give the same result;
- a repeated field over ``max_items`` is one error and its items are not checked;
- ``google.protobuf.*`` messages other than Timestamp are not walked.
"""

from __future__ import annotations

import keyword
import threading
from collections.abc import Callable
from typing import Any

from google.protobuf import descriptor, message

from levy.app.registry import field_policy, is_output_only
from levy.domain.errors import ErrorItem, ValidationFailed

FD = descriptor.FieldDescriptor

_Checker = Callable[[message.Message, str, list[ValidationFailed], dict[int, list[ErrorItem]]], None]

_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799  # 0001-01-01 .. 9999-12-31T23:59:59Z
_MAX_NANOS = 999_999_999


def check(msg: message.Message, item_errors: dict[int, list[ErrorItem]], pointer: str = "") -> None:
    checker = _BY_CLASS.get(type(msg))  # by class: ``msg.DESCRIPTOR`` is an attribute lookup through upb
    if checker is None:
        checker = _BY_CLASS[type(msg)] = _compile(msg.DESCRIPTOR)
    errors: list[ValidationFailed] = []
    checker(msg, pointer, errors, item_errors)
    if errors:
        raise ValidationFailed.many(errors)


def check_outside_body(request: message.Message, body: str) -> None:
    """The request's own string fields beside a body field (the path ids of
    ``PATCH /customers/{customer_id}``): no NUL characters."""
    errors = []
    for name in _strings_outside(request.DESCRIPTOR, body):
        value = getattr(request, name)
        if "\x00" in value:
            errors.append(_string_error(value, name, 0, 0, f"/{name}"))
    if errors:
        raise ValidationFailed.many(errors)


_OUTSIDE: dict[tuple[descriptor.Descriptor, str], tuple[str, ...]] = {}


def _strings_outside(desc: descriptor.Descriptor, body: str) -> tuple[str, ...]:
    key = (desc, body)
    names = _OUTSIDE.get(key)
    if names is None:
        names = _OUTSIDE[key] = tuple(f.name for f in desc.fields
                                      if f.name != body and f.type == FD.TYPE_STRING and not f.is_repeated)
    return names


# The errors, built only when a check fails (the generated code calls these).

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


def _timestamp_error(ts: Any, name: str, ptr: str) -> ValidationFailed:
    return ValidationFailed(
        f"'{name}' is not a valid timestamp (years 1 to 9999, nanos 0 to 999999999).",
        pointer=ptr, input={"seconds": ts.seconds, "nanos": ts.nanos}, type="datetime_parsing",
    )


def _too_many(name: str, count: int, max_items: int, ptr: str) -> ValidationFailed:
    return ValidationFailed(f"'{name}' has {count} items; the maximum is {max_items}.", pointer=ptr, type="too_long")


def _item_failed(item_errors: dict[int, list[ErrorItem]], i: int, errors: list[ValidationFailed]) -> None:
    item_errors.setdefault(i, []).extend(it for e in errors for it in e.items)


# What a field needs.

def _is_timestamp(f: FD) -> bool:
    return f.type == FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.Timestamp"


def _is_walked(f: FD) -> bool:
    """Our own messages are walked; ``google.protobuf.*`` ones (wrappers, Struct, FieldMask) are not."""
    return f.type == FD.TYPE_MESSAGE and not f.message_type.full_name.startswith("google.protobuf.")


_HAS_CHECKS: dict[descriptor.Descriptor, bool] = {}


def _has_checks(desc: descriptor.Descriptor) -> bool:
    """Some field of ``desc``, or of a message reachable from it, has something to
    check (a string, a Timestamp, a ``max_items``). A search rather than a recursion,
    so that a message that contains itself terminates."""
    known = _HAS_CHECKS.get(desc)
    if known is not None:
        return known
    seen: set[descriptor.Descriptor] = set()
    todo, found = [desc], False
    while todo and not found:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        for f in d.fields:
            if f.type == FD.TYPE_STRING or _is_timestamp(f) or field_policy(f).max_items:
                found = True
                break
            if _is_walked(f):
                todo.append(f.message_type)
    _HAS_CHECKS[desc] = found
    return found


# The compiler.

# Python refuses more than 20 nested loops in a function (and 100 indentation levels):
# past this indentation, a sub-message is checked by a call to its own checker instead
# of inline (as is a message that contains itself).
_MAX_INLINE_DEPTH = 12
# A message used in many places is inlined in each: past this many lines of one
# checker, sub-messages are called too, so that the source stays small.
_MAX_INLINE_LINES = 2000

_NAMESPACE: dict[str, Any] = {
    "_string_error": _string_error, "_timestamp_error": _timestamp_error, "_too_many": _too_many,
    "_item_failed": _item_failed,
}
_CHECKERS: dict[descriptor.Descriptor, _Checker] = {}
_BY_CLASS: dict[type, _Checker] = {}
_NAMES: dict[descriptor.Descriptor, str] = {}
_COMPILING = threading.RLock()  # names and checkers are made once, even from two threads


def _name_of(desc: descriptor.Descriptor) -> str:
    name = _NAMES.get(desc)
    if name is None:
        name = _NAMES[desc] = f"_check_{len(_NAMES)}_{desc.full_name.replace('.', '_')}"
    return name


def _compile(desc: descriptor.Descriptor) -> _Checker:
    """The checker of ``desc`` (cached); messages it calls rather than inlines are compiled too."""
    with _COMPILING:
        checker = _CHECKERS.get(desc)
        if checker is None:
            before = set(_CHECKERS)
            try:
                checker = _generate(desc)
            except BaseException:  # none half made: a checker calling one never defined
                for d in set(_CHECKERS) - before:
                    del _CHECKERS[d]
                raise
        return checker


def _generate(desc: descriptor.Descriptor) -> _Checker:
    gen = _Generator()
    name = _name_of(desc)
    gen.line(0, f"def {name}(m, ptr, errors, item_errors):")
    gen.message(desc, "m", "{ptr}", "errors", 1, (desc,))
    gen.line(1, "pass")
    source = "\n".join(gen.lines)
    exec(compile(source, f"<levy.app.constraints {desc.full_name}>", "exec"), _NAMESPACE)
    checker = _CHECKERS.setdefault(desc, _NAMESPACE[name])
    checker.source = source  # type: ignore[attr-defined]  # for reading and for tests
    for called in gen.calls:
        _compile(called)
    return checker


class _Generator:
    """Python source of one checker. ``frag`` is the pointer of the message being
    checked as the inside of an f-string (``{ptr}/line_items/{i1}``), evaluated only
    when an error is built."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.calls: list[descriptor.Descriptor] = []
        self._n = 0

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def var(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def message(self, desc: descriptor.Descriptor, m: str, frag: str, errs: str, depth: int,
                inlined: tuple[descriptor.Descriptor, ...]) -> None:
        values: dict[str, str] = {}
        for f in sorted(desc.fields, key=lambda f: f.number):  # ListFields' order
            self.field(f, m, frag, errs, depth, inlined, values)
        for f in desc.fields:  # strings without presence that are empty: blank
            p = field_policy(f)
            if f.type == FD.TYPE_STRING and not f.is_repeated and not f.has_presence and p.min_length:
                self.line(depth, f"if not {values[f.name]}:")
                self.line(depth + 1, f'{errs}.append(_string_error("", {f.name!r}, 0, {p.min_length}, '
                                     f'f"{frag}/{f.name}"))')

    def field(self, f: FD, m: str, frag: str, errs: str, depth: int,
              inlined: tuple[descriptor.Descriptor, ...], values: dict[str, str]) -> None:
        p = field_policy(f)
        name = f.name
        get = f"getattr({m}, {name!r})" if keyword.iskeyword(name) else f"{m}.{name}"
        here = f"{frag}/{name}"
        walked = _is_walked(f) and _has_checks(f.message_type)
        if f.is_repeated:
            if f.type == FD.TYPE_MESSAGE and f.message_type.GetOptions().map_entry and walked:
                # ``ListFields`` gives a map as a mapping; the walk would have handed its keys to
                # the message walker. No proto has one: say what to decide rather than guess.
                raise NotImplementedError(f"{f.full_name}: a map field whose entries have limits to check")
            items = f.type == FD.TYPE_STRING or walked
            if not items and not p.max_items:
                return
            # Most repeated fields of a request are empty: one truth test, and an empty container
            # is never iterated (an iterator over one costs more than all the rest). Items are
            # read by index (``r[i]``), which is cheaper than an iterator too.
            value, count = self.var("r"), self.var("n")
            self.line(depth, f"{value} = {get}")
            self.line(depth, f"if {value}:")
            depth += 1
            self.line(depth, f"{count} = len({value})")
            if p.max_items:
                self.line(depth, f"if {count} > {p.max_items}:")
                self.line(depth + 1, f'{errs}.append(_too_many({name!r}, {count}, {p.max_items}, f"{here}"))')
                if not items:
                    return
                self.line(depth, "else:")
                depth += 1
            i, item = self.var("i"), self.var("x")
            if f.type == FD.TYPE_STRING:
                self.line(depth, f"for {i} in range({count}):")
                self.line(depth + 1, f"{item} = {value}[{i}]")
                self.line(depth + 1, f"if {_string_test(item, p.max_length, p.min_length)}:")
                self.line(depth + 2, f"{errs}.append(_string_error({item}, {name!r}, {p.max_length}, "
                                     f'{p.min_length}, f"{here}/{{{i}}}"))')
            elif p.per_item_errors:
                # Each item's errors go to ``item_errors[i]``, not to the request's.
                sub = self.var("s")
                self.line(depth, f"{sub} = []")
                self.line(depth, f"for {i} in range({count}):")
                self.line(depth + 1, f"{item} = {value}[{i}]")
                self.sub_message(f.message_type, item, f"{here}/{{{i}}}", sub, depth + 1, inlined)
                self.line(depth + 1, f"if {sub}:")
                self.line(depth + 2, f"_item_failed(item_errors, {i}, {sub})")
                self.line(depth + 2, f"{sub} = []")
            else:
                self.line(depth, f"for {i} in range({count}):")
                self.line(depth + 1, f"{item} = {value}[{i}]")
                self.sub_message(f.message_type, item, f"{here}/{{{i}}}", errs, depth + 1, inlined)
        elif f.type == FD.TYPE_STRING:
            value = values[name] = self.var("v")
            self.line(depth, f"{value} = {get}")
            test = _string_test(value, p.max_length, p.min_length)
            error = f'{errs}.append(_string_error({value}, {name!r}, {p.max_length}, {p.min_length}, f"{here}"))'
            if f.has_presence and p.min_length:  # set to "": blank (when unset, not checked)
                self.line(depth, f"if {value}:")
                self.line(depth + 1, f"if {test}:")
                self.line(depth + 2, error)
                self.line(depth, f"elif {name!r} in {m}:")
                self.line(depth + 1, error)
            else:  # "" breaks no rule but min_length, checked with the unset ones
                self.line(depth, f"if {value} and ({test}):")
                self.line(depth + 1, error)
        elif _is_timestamp(f):
            # An unset Timestamp reads as 0 s, 0 ns: valid, so testing presence first changes
            # nothing but the cost (see ``_probe_presence``).
            ts = self.var("t")
            if _probe_presence(f):
                self.line(depth, f"if {name!r} in {m}:")
                depth += 1
            self.line(depth, f"{ts} = {get}")
            self.line(depth, f"if not ({_MIN_SECONDS} <= {ts}.seconds <= {_MAX_SECONDS} "
                             f"and 0 <= {ts}.nanos <= {_MAX_NANOS}):")
            self.line(depth + 1, f'{errs}.append(_timestamp_error({ts}, {name!r}, f"{here}"))')
        elif walked:
            # An unset message reads as an empty one (nothing is set by reading it), whose
            # checks all pass unless it has blank-when-empty strings: only then is presence
            # needed to keep unset messages unchecked, and where the message contains itself,
            # to end the walk (otherwise see ``_probe_presence``).
            sub = self.var("m")
            if _blank_when_empty(f.message_type) or _contains_itself(f.message_type) or _probe_presence(f):
                self.line(depth, f"if {name!r} in {m}:")
                depth += 1
            self.line(depth, f"{sub} = {get}")
            self.sub_message(f.message_type, sub, here, errs, depth, inlined)

    def sub_message(self, desc: descriptor.Descriptor, m: str, frag: str, errs: str, depth: int,
                    inlined: tuple[descriptor.Descriptor, ...]) -> None:
        """Inline, unless ``desc`` contains itself (or the code nests too deep): then a call."""
        if desc in inlined or depth > _MAX_INLINE_DEPTH or len(self.lines) > _MAX_INLINE_LINES:
            self.calls.append(desc)
            self.line(depth, f'{_name_of(desc)}({m}, f"{frag}", {errs}, item_errors)')
        else:
            self.message(desc, m, frag, errs, depth, (*inlined, desc))


def _blank_when_empty(desc: descriptor.Descriptor) -> bool:
    """``desc`` has strings without presence and with a ``min_length``: an empty one fails."""
    return any(f.type == FD.TYPE_STRING and not f.is_repeated and not f.has_presence and field_policy(f).min_length
               for f in desc.fields)


def _contains_itself(desc: descriptor.Descriptor) -> bool:
    """A message of type ``desc`` can hold, at some depth, another one."""
    seen: set[descriptor.Descriptor] = set()
    todo = [f.message_type for f in desc.fields if _is_walked(f)]
    while todo:
        d = todo.pop()
        if d is desc or d == desc:
            return True
        if d not in seen:
            seen.add(d)
            todo.extend(f.message_type for f in d.fields if _is_walked(f))
    return False


def _probe_presence(f: FD) -> bool:
    """Whether to test that a message field is set before reading it, where either way
    gives the same result. Reading an unset one and checking its (empty) fields costs
    more than the test; reading a set one costs one test less. ``OUTPUT_ONLY`` fields
    are the ones a request usually leaves unset."""
    return is_output_only(f)


def _string_test(value: str, max_len: int, min_len: int) -> str:
    """Whether ``value`` breaks a rule (``_string_error`` then says which)."""
    test = f'"\\x00" in {value}'
    if max_len:
        test += f" or len({value}) > {max_len}"
    if min_len:
        test += f" or len({value}.strip()) < {min_len}"
    return test
