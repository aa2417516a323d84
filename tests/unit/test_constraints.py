"""The field-limit checks (``levy.app.constraints``) against the generic walker as it
was before issue 10 compiled the checks and issue 23 folded them back into a walk,
kept here as the reference: for every message type reachable from every RPC's
request (so also every body a REST route checks at its root), and for synthetic
messages with the cases the protos have not (yet) got, Hypothesis builds messages
around every limit (NUL characters, blanks, strings at and over their maximum,
repeated fields at and over ``max_items``, invalid timestamps, present-but-empty
messages and optional strings) and both must give the same errors (message,
pointer, type, input, in the same order) and the same item errors. Hand-picked
cases with their expected errors written out follow.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from google.protobuf import descriptor, descriptor_pb2, descriptor_pool, message, message_factory
from google.protobuf import field_mask_pb2, timestamp_pb2, wrappers_pb2  # noqa: F401  (in the pool for the synthetic file)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from levy.app import constraints
from levy.app.registry import field_policy, methods
from levy.domain.errors import ErrorItem, ValidationFailed
from levy.v1 import options_pb2

FD = descriptor.FieldDescriptor


# --- The reference: the generic walker over ListFields(), as it was before compilation. ---

_STRING, _TIMESTAMP, _MESSAGE, _MAP = 1, 2, 3, 4
_Spec = tuple[int, int, int, int, bool]


@cache
def _plan(desc: descriptor.Descriptor) -> dict[FD, _Spec]:
    out: dict[FD, _Spec] = {}
    for f in desc.fields:
        p = field_policy(f)
        is_msg = f.type == FD.TYPE_MESSAGE and not f.message_type.full_name.startswith("google.protobuf.")
        if f.type == FD.TYPE_STRING:
            kind = _STRING
        elif _is_timestamp(f):
            kind = _TIMESTAMP
        elif is_msg and f.message_type.GetOptions().map_entry and _has_checks(f.message_type):
            kind = _MAP  # map<string, string>: keys and values are strings
        elif is_msg and _has_checks(f.message_type):
            kind = _MESSAGE
        elif p.max_items:
            kind = 0
        else:
            continue
        out[f] = (kind, p.max_length, p.min_length, p.max_items, p.per_item_errors)
    return out


@cache
def _unset_checks(desc: descriptor.Descriptor) -> tuple[tuple[FD, int], ...]:
    return tuple((f, p.min_length) for f in desc.fields
                 if f.type == FD.TYPE_STRING and not f.is_repeated and not f.has_presence
                 and (p := field_policy(f)).min_length)


def _is_timestamp(f: FD) -> bool:
    return f.type == FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.Timestamp"


_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799


def _timestamp_errors(ts: Any, f: FD, ptr: str) -> ValidationFailed | None:
    seconds, nanos = ts.seconds, ts.nanos
    if _MIN_SECONDS <= seconds <= _MAX_SECONDS and 0 <= nanos <= 999_999_999:
        return None
    return ValidationFailed(
        f"'{f.name}' is not a valid timestamp (years 1 to 9999, nanos 0 to 999999999).",
        pointer=ptr, input={"seconds": seconds, "nanos": nanos}, type="datetime_parsing",
    )


@cache
def _has_checks(desc: descriptor.Descriptor) -> bool:
    return bool(_plan(desc))


def reference_check(msg: message.Message, item_errors: dict[int, list[ErrorItem]], pointer: str = "") -> None:
    errors: list[ValidationFailed] = []
    _walk(msg, pointer, errors, item_errors)
    if errors:
        raise ValidationFailed.many(errors)


def reference_check_outside_body(request: message.Message, body: str) -> None:
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
        if kind == _MAP:
            for k, v in value.items():
                e = _string_errors(k, f, 0, 0, f"{ptr}/{f.name}") or _string_errors(
                    v, f, max_len, min_len, f"{ptr}/{f.name}/{k}")
                if e:
                    errors.append(e)
        elif f.is_repeated:
            if max_items and len(value) > max_items:
                errors.append(ValidationFailed(f"'{f.name}' has {len(value)} items; the maximum is {max_items}.",
                                               pointer=f"{ptr}/{f.name}", type="too_long"))
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
        if value == "":
            errors.append(ValidationFailed(f"'{f.name}' cannot be blank.", pointer=f"{ptr}/{f.name}", input=value,
                                           type="string_too_short"))


# --- Synthetic messages: what the protos have not got today, built into the default pool. ---

def _synthetic_file() -> descriptor_pb2.FileDescriptorProto:
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(
        name="levytest/constraints_compiled.proto", package="levytest.cc", syntax="proto3",
        dependency=["levy/v1/options.proto", "google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto",
                    "google/protobuf/field_mask.proto"],
    )

    def field(m: Any, name: str, number: int, ftype: int, *, repeated: bool = False, type_name: str = "",
              optional: bool = False, oneof: int | None = None, **policy: Any) -> None:
        f = m.field.add(name=name, number=number, type=ftype, label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
        if type_name:
            f.type_name = type_name
        if optional:  # proto3 ``optional``: a synthetic oneof of its own, declared after the real ones
            f.proto3_optional = True
        if oneof is not None:
            f.oneof_index = oneof
        for k, v in policy.items():
            setattr(f.options.Extensions[options_pb2.field_policy], k, v)

    leaf = fdp.message_type.add(name="Leaf")  # blank-when-empty: only checked when set
    field(leaf, "code", 2, F.TYPE_STRING, min_length=1, max_length=6)
    field(leaf, "note", 1, F.TYPE_STRING, max_length=4)

    item = fdp.message_type.add(name="Item")
    field(item, "label", 3, F.TYPE_STRING, optional=True, min_length=2, max_length=8)
    field(item, "leaf", 1, F.TYPE_MESSAGE, type_name=".levytest.cc.Leaf")
    field(item, "at", 2, F.TYPE_MESSAGE, type_name=".google.protobuf.Timestamp")
    field(item, "inner", 4, F.TYPE_MESSAGE, repeated=True, type_name=".levytest.cc.Leaf", per_item_errors=True,
          max_items=3)

    shape = fdp.message_type.add(name="Shape")
    shape.oneof_decl.add(name="choice")
    # Declared out of number order: ListFields (and so errors) go by number.
    field(shape, "name", 7, F.TYPE_STRING, min_length=2, max_length=5)
    field(shape, "tags", 3, F.TYPE_STRING, repeated=True, max_items=3, max_length=4, min_length=1)
    field(shape, "plain", 1, F.TYPE_STRING)
    field(shape, "opt", 12, F.TYPE_STRING, optional=True, min_length=1)
    field(shape, "from", 2, F.TYPE_STRING, max_length=3)  # a Python keyword
    field(shape, "stamps", 4, F.TYPE_MESSAGE, repeated=True, type_name=".google.protobuf.Timestamp", max_items=2)
    field(shape, "numbers", 5, F.TYPE_INT32, repeated=True, max_items=2)
    field(shape, "wrapped", 6, F.TYPE_MESSAGE, type_name=".google.protobuf.StringValue")
    field(shape, "mask", 8, F.TYPE_MESSAGE, type_name=".google.protobuf.FieldMask")
    field(shape, "items", 9, F.TYPE_MESSAGE, repeated=True, type_name=".levytest.cc.Item", per_item_errors=True,
          max_items=4)
    field(shape, "leaf", 10, F.TYPE_MESSAGE, type_name=".levytest.cc.Leaf")
    field(shape, "leaves", 11, F.TYPE_MESSAGE, repeated=True, type_name=".levytest.cc.Leaf")
    field(shape, "pick_text", 13, F.TYPE_STRING, oneof=0, min_length=1, max_length=3)
    field(shape, "pick_leaf", 14, F.TYPE_MESSAGE, oneof=0, type_name=".levytest.cc.Leaf")
    field(shape, "counts", 15, F.TYPE_MESSAGE, repeated=True, type_name=".levytest.cc.Shape.CountsEntry", max_items=2)
    field(shape, "wrappers", 16, F.TYPE_MESSAGE, repeated=True, type_name=".google.protobuf.StringValue", max_items=1)
    entry = shape.nested_type.add(name="CountsEntry")
    entry.options.map_entry = True
    field(entry, "key", 1, F.TYPE_INT32)
    field(entry, "value", 2, F.TYPE_INT32)
    # proto3 ``optional`` fields get synthetic oneofs, after the real ones.
    for m in fdp.message_type:
        for f in m.field:
            if f.proto3_optional:
                f.oneof_index = len(m.oneof_decl)
                m.oneof_decl.add(name=f"_{f.name}")

    # A chain nested deep: Chain0 -> Chain1 -> ... through repeated fields.
    for depth in range(9):
        chain = fdp.message_type.add(name=f"Chain{depth}")
        field(chain, "name", 1, F.TYPE_STRING, max_length=3)
        if depth < 8:
            field(chain, "next", 2, F.TYPE_MESSAGE, repeated=True, type_name=f".levytest.cc.Chain{depth + 1}")
            field(chain, "one", 3, F.TYPE_MESSAGE, type_name=f".levytest.cc.Chain{depth + 1}")

    # A message that contains itself (the reference walker cannot plan it: tested on its own).
    tree = fdp.message_type.add(name="Tree")
    field(tree, "name", 1, F.TYPE_STRING, max_length=3)
    field(tree, "child", 2, F.TYPE_MESSAGE, type_name=".levytest.cc.Tree")
    field(tree, "children", 3, F.TYPE_MESSAGE, repeated=True, type_name=".levytest.cc.Tree", max_items=2)
    return fdp


def _synthetic(name: str) -> type[message.Message]:
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName("levytest/constraints_compiled.proto")
    except KeyError:
        pool.Add(_synthetic_file())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"levytest.cc.{name}"))


# --- Messages around every limit. ---

_TS_SECONDS = st.one_of(st.sampled_from([_MIN_SECONDS - 1, _MIN_SECONDS, 0, 1773532800, _MAX_SECONDS,
                                         _MAX_SECONDS + 1, -(2**63), 2**63 - 1]),
                        st.integers(-(2**63), 2**63 - 1))
_TS_NANOS = st.one_of(st.sampled_from([-1, 0, 999_999_999, 1_000_000_000, -(2**31), 2**31 - 1]),
                      st.integers(0, 999_999_999))


def _strings(max_len: int) -> st.SearchStrategy[str]:
    limit = max_len or 24
    return st.one_of(
        st.sampled_from(["", " ", "\t\n ", "\x00", "a\x00", "ok", "USD", " x "]),
        st.text(max_size=8),
        st.integers(max(limit - 1, 0), limit + 1).flatmap(
            lambda n: st.text(alphabet=st.sampled_from("ab é\x00\t"), min_size=n, max_size=n)),
    )


def _count(cap: int, depth: int) -> st.SearchStrategy[int]:
    """How many items: a few, or around the cap. Large caps (the 1000 items of a batch)
    only at the top: a batch of 1001 items each with 1001 lines is a million messages
    to build and walk per example, which took most of this file's 15 minutes."""
    small = st.sampled_from([0, 0, 1, 1, 2] if depth < 3 else [0, 0, 0, 1])
    around = cap and (depth == 0 or (depth == 1 and cap <= 50) or cap <= 10)
    return st.one_of(small, st.sampled_from([cap - 1, cap, cap + 1])) if around else small


_INT_LIMITS = {FD.TYPE_INT32: 2**31 - 1, FD.TYPE_INT64: 2**63 - 1, FD.TYPE_UINT32: 2**32 - 1,
               FD.TYPE_UINT64: 2**64 - 1}


def _scalar(draw: st.DrawFn, f: FD) -> Any:
    if f.type == FD.TYPE_STRING:
        return draw(_strings(field_policy(f).max_length))
    if f.type == FD.TYPE_BOOL:
        return draw(st.booleans())
    if f.type == FD.TYPE_ENUM:
        return draw(st.sampled_from([v.number for v in f.enum_type.values]))
    if f.type in _INT_LIMITS:
        return draw(st.integers(0, min(_INT_LIMITS[f.type], 10**6)))
    if f.type in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return draw(st.floats(-1e6, 1e6))
    if f.type == FD.TYPE_BYTES:
        return draw(st.binary(max_size=4))
    return None


def _fill(draw: st.DrawFn, msg: message.Message, depth: int) -> None:
    for f in msg.DESCRIPTOR.fields:
        if not draw(st.booleans()):
            continue
        is_msg = f.type == FD.TYPE_MESSAGE
        if is_msg and f.message_type.GetOptions().map_entry:
            container = getattr(msg, f.name)
            string_map = f.message_type.fields_by_name["key"].type == FD.TYPE_STRING
            for k in range(draw(_count(field_policy(f).max_items, depth))):
                if string_map:
                    container[draw(_strings(0))] = draw(_strings(0))
                else:
                    container[k] = k
        elif f.is_repeated:
            container = getattr(msg, f.name)
            n = draw(_count(field_policy(f).max_items, depth))
            if not is_msg:
                made = [_scalar(draw, f) for _ in range(min(n, 3))]
                container.extend(made[k % len(made)] for k in range(n))
                continue
            made = []
            for _ in range(min(n, 3)):  # a few drawn items, copied up to the count (1000 of them at most)
                sub = container.add()
                _fill_message(draw, sub, depth + 1)
                made.append(sub)
            for k in range(n - len(made)):
                container.add().CopyFrom(made[k % len(made)])
        elif is_msg:
            sub = getattr(msg, f.name)
            sub.SetInParent()  # set, possibly empty
            _fill_message(draw, sub, depth + 1)
        else:
            value = _scalar(draw, f)
            if value is not None:
                setattr(msg, f.name, value)


def _fill_message(draw: st.DrawFn, msg: message.Message, depth: int) -> None:
    full = msg.DESCRIPTOR.full_name
    if full == "google.protobuf.Timestamp":
        msg.seconds, msg.nanos = draw(_TS_SECONDS), draw(_TS_NANOS)  # type: ignore[attr-defined]
    elif full == "google.protobuf.FieldMask":
        msg.paths.extend(draw(st.lists(_strings(0), max_size=2)))  # type: ignore[attr-defined]
    elif full == "google.protobuf.StringValue":
        msg.value = draw(_strings(3))  # type: ignore[attr-defined]
    elif full.startswith("google.protobuf."):
        return
    elif depth <= 10:
        _fill(draw, msg, depth)


@st.composite
def messages(draw: st.DrawFn, cls: type[message.Message]) -> message.Message:
    msg = cls()
    _fill(draw, msg, 0)
    return msg


_POINTERS = st.sampled_from(["", "/customer", "/data/3"])
_ITEM = ErrorItem(status=422, code="validation_error", title="Validation Error", detail="earlier", pointer="/data/0/x")
_PRIOR = st.sampled_from([{}, {0: [_ITEM]}, {1: [_ITEM, _ITEM]}])  # item errors the JSON parser already found


def _outcome(fn: Any, msg: message.Message, pointer: str, prior: dict[int, list[ErrorItem]]) -> tuple[Any, ...]:
    item_errors = {k: list(v) for k, v in prior.items()}
    before = msg.SerializeToString(deterministic=True)
    try:
        fn(msg, item_errors, pointer)
        raised = None
    except ValidationFailed as e:
        raised = (type(e), e.detail, e.items)
    assert msg.SerializeToString(deterministic=True) == before  # reading sets nothing
    return raised, item_errors


def _same(msg: message.Message, pointer: str, prior: dict[int, list[ErrorItem]]) -> None:
    expected = _outcome(reference_check, msg, pointer, prior)
    assert _outcome(constraints.check, msg, pointer, prior) == expected


def _reachable() -> list[type[message.Message]]:
    """Every message the checks can reach from a request (each can be a body checked at its root)."""
    seen: dict[str, descriptor.Descriptor] = {}
    todo = [m.request_cls.DESCRIPTOR for m in methods()]
    while todo:
        d = todo.pop()
        if d.full_name in seen or d.full_name.startswith("google.protobuf."):
            continue
        seen[d.full_name] = d
        todo.extend(f.message_type for f in d.fields if f.type == FD.TYPE_MESSAGE)
    return [message_factory.GetMessageClass(d) for _, d in sorted(seen.items())]


_SETTINGS = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("cls", _reachable(), ids=lambda c: c.DESCRIPTOR.name)
def test_checks_match_the_reference_walker(cls: type[message.Message]) -> None:
    @_SETTINGS
    @given(msg=messages(cls), pointer=_POINTERS, prior=_PRIOR)
    def run(msg: message.Message, pointer: str, prior: dict[int, list[ErrorItem]]) -> None:
        _same(msg, pointer, prior)

    run()


_SYNTHETIC = ["Shape", "Item", "Leaf", "Chain0"]


@pytest.mark.parametrize("name", _SYNTHETIC)
def test_checks_match_on_synthetic_messages(name: str) -> None:
    cls = _synthetic(name)

    @settings(_SETTINGS, max_examples=300)
    @given(msg=messages(cls), pointer=_POINTERS, prior=_PRIOR)
    def run(msg: message.Message, pointer: str, prior: dict[int, list[ErrorItem]]) -> None:
        _same(msg, pointer, prior)

    run()


_BODIES = [(m.request_cls, m.http.body) for m in methods() if m.http.body not in ("", "*")]


@pytest.mark.parametrize("request_cls,body", [*_BODIES, ("Shape", "items"), ("Shape", "tags")],
                         ids=lambda v: v if isinstance(v, str) else v.DESCRIPTOR.name)
def test_outside_body_matches(request_cls: Any, body: str) -> None:
    cls = _synthetic(request_cls) if isinstance(request_cls, str) else request_cls

    def outcome(fn: Any, request: message.Message) -> Any:
        try:
            fn(request, body)
        except ValidationFailed as e:
            return type(e), e.detail, e.items
        return None

    @_SETTINGS
    @given(request=messages(cls))
    def run(request: message.Message) -> None:
        assert outcome(constraints.check_outside_body, request) == outcome(reference_check_outside_body, request)

    run()


# --- Hand-picked cases, readable on their own. ---

def _errors(msg: message.Message, pointer: str = "") -> tuple[list[tuple[str | None, str]], dict[int, list[Any]]]:
    item_errors: dict[int, list[ErrorItem]] = {}
    try:
        constraints.check(msg, item_errors, pointer)
        items: list[ErrorItem] = []
    except ValidationFailed as e:
        items = e.items
    return [(it.pointer, it.detail) for it in items], {i: [it.pointer for it in v] for i, v in item_errors.items()}


def test_order_blanks_per_item_and_skipped_items() -> None:
    shape = _synthetic("Shape")()
    shape.tags.extend(["a", "b", "c", "d"])  # over max_items: one error, items not looked at
    setattr(shape, "from", "toolong")
    shape.items.add().label = "x"  # too short for min_length 2 (it is set)
    shape.items.add().leaf.SetInParent()  # a set Leaf whose code is empty: blank
    shape.items.add()
    shape.items[2].inner.add()  # nested per-item field: its own index, in the same dict
    shape.opt = ""  # optional and set to "": blank
    assert _errors(shape, "/body") == (
        [("/body/from", "'from' is 7 characters long; the maximum is 3."),
         ("/body/tags", "'tags' has 4 items; the maximum is 3."),
         ("/body/opt", "'opt' cannot be blank."),
         ("/body/name", "'name' cannot be blank.")],  # unset, without presence: last
        {0: ["/body/items/0/label", "/body/items/2/inner/0/code"], 1: ["/body/items/1/leaf/code"]},
    )
    assert constraints.check(_synthetic("Item")(), {}) is None  # an unset Leaf is not blank


def test_message_containing_itself() -> None:
    tree = _synthetic("Tree")(name="ok")
    tree.child.child.name = "long"
    tree.child.children.add(name="a\x00")
    tree.children.add().children.extend([tree.child, tree.child, tree.child])
    assert _errors(tree) == (
        [("/child/child/name", "'name' is 4 characters long; the maximum is 3."),
         ("/child/children/0/name", "'name' contains a NUL character."),
         ("/children/0/children", "'children' has 3 items; the maximum is 2.")],
        {},
    )


def test_deep_chain() -> None:
    cls = _synthetic("Chain0")
    msg = cls()
    node = msg
    for _ in range(8):
        node = node.next.add()
    node.name = "long"
    assert _errors(msg)[0] == [("/next/0/next/0/next/0/next/0/next/0/next/0/next/0/next/0/name",
                                "'name' is 4 characters long; the maximum is 3.")]


def test_a_string_map_is_checked_as_strings() -> None:
    """A map<string, string> (OrganizationSettings.filing_currencies): a NUL in a value is refused at
    ``/field/<key>``, one in a key at the field; other maps with limits are still refused below."""
    from levy.v1 import organization_pb2
    msg = organization_pb2.OrganizationSettings(filing_currencies={"GB": "GBP", "FR": "EU\x00R"})
    with pytest.raises(ValidationFailed) as e:
        constraints.check(msg, {})
    assert [it.pointer for it in e.value.items] == ["/filing_currencies/FR"]
    with pytest.raises(ValidationFailed) as e:
        constraints.check(organization_pb2.OrganizationSettings(filing_currencies={"G\x00B": "GBP"}), {})
    assert [it.pointer for it in e.value.items] == ["/filing_currencies"]
    constraints.check(organization_pb2.OrganizationSettings(filing_currencies={"GB": "GBP"}), {})


def test_map_with_limits_is_refused() -> None:
    F = descriptor_pb2.FieldDescriptorProto
    # map<string, int32>: its keys are strings to check, its values not (only string maps are decided).
    fdp = descriptor_pb2.FileDescriptorProto(name="levytest/constraints_int_map.proto", package="levytest.map",
                                             syntax="proto3")
    m = fdp.message_type.add(name="WithMap")
    m.field.add(name="names", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                type_name=".levytest.map.WithMap.NamesEntry")
    entry = m.nested_type.add(name="NamesEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(fdp.name)
    except KeyError:
        pool.Add(fdp)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("levytest.map.WithMap"))
    with pytest.raises(NotImplementedError, match="map field"):
        constraints.check(cls(), {})
