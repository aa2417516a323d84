"""The OpenAPI 3.1 document of the JSON interface, generated from the protos.

Nothing here is written by hand per operation: paths, methods, parameters and
bodies come from the ``google.api.http`` annotations of the registry's
methods (``levy.app.registry.methods()``), schemas from the message
descriptors, limits from ``levy.v1.field_policy``, statuses and error styles
from ``levy.v1.method_policy``, read-only fields from ``google.api.field_behavior``
and descriptions from the proto comments (read from a descriptor set compiled
with ``--include_source_info``; ``scripts/gen-protos`` makes one).

The document mirrors what the gateway does (``levy.transport.gateway`` and
``codec``):

- input objects reject unknown and read-only properties
  (``additionalProperties: false``; ``OUTPUT_ONLY`` fields are left out), and
  any input property may be ``null`` (null leaves the field unset);
- responses render every field; fields with presence are ``null`` when unset
  (``type: [X, "null"]``), ``null_when_empty`` arrays are ``null`` when empty;
- ``google.protobuf.Timestamp`` is a ``date-time`` string;
- the success status is ``method_policy.success_status`` (204 has no body);
- every error status the gateway can answer is listed with its body: the
  JSON:API body, or for ``ERROR_STYLE_CALCULATION`` methods the calculation
  shape for 422 / 429 / 500.

``scripts/gen-protos`` writes the document to ``docs/openapi.json`` and to
``src/levy/data/openapi.json`` (served at ``GET /openapi.json``);
``scripts/gen-protos --check`` fails when either is stale.

Usage: ``python -m levy.transport.openapi --descriptor-set FILE --out FILE [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import re
from importlib import resources
from typing import Any

from google.protobuf import descriptor, descriptor_pb2

from levy import __version__
from levy.app.idempotency import MAX_KEY_LENGTH
from levy.app.registry import MethodInfo, field_policy, is_output_only, methods, services
from levy.domain.pagination import MAX_LIMIT
from levy.domain.versioning import CURRENT, RELEASES
from levy.transport.codec import _INT_RANGE as INT_RANGE
from levy.transport.codec import is_map
from levy.v1 import options_pb2

FD = descriptor.FieldDescriptor
Schema = dict[str, Any]

_VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")
_TIMESTAMP = "google.protobuf.Timestamp"
_STRUCT = "google.protobuf.Struct"
_ERROR_OBJECT = "levy.v1.ErrorObject"
_EMPTY = "google.protobuf.Empty"
_HTTP_BODY = "google.api.HttpBody"

JSON = "application/json"
JSON_API_ERROR = {"$ref": "#/components/schemas/JsonApiErrorBody"}
_ERROR_TITLES = {
    400: "Bad request: the `Service-Version` header is malformed, unknown or dated in the future.",
    401: "Missing, malformed, unknown or revoked API key (`authentication_error`).",
    403: "The method needs an admin-scoped API key (`permission_error`).",
    404: "No such resource in the caller's organization, or no such route (`not_found`).",
    405: "The path exists but not with this method (`method_not_allowed`); the `Allow` header lists the methods.",
    409: "The request collides with stored state: duplicate, or a concurrent change (`conflict`).",
    413: "The body is over the method's size limit, decided before parsing (`request_too_large`).",
    422: "Validation failed: malformed JSON, unknown, read-only or mistyped properties, limits (`validation_error`).",
    429: "Rate limit exceeded (`rate_limit_error`); retry after `Retry-After` seconds.",
    500: "Unexpected failure; the body carries only the request id (`system_internal_error`).",
    501: "The operation is not implemented yet by this server (`not_implemented`).",
    503: "Shutting down or the database is unavailable; retry (`service_unavailable`).",
}


# ------------------------------------------------------------------ comments


def comments_from_descriptor_set(data: bytes) -> dict[str, str]:
    """Leading comments of services, methods, messages and fields by full name."""
    fds = descriptor_pb2.FileDescriptorSet.FromString(data)
    out: dict[str, str] = {}
    for f in fds.file:
        if not f.name.startswith("levy/"):
            continue
        by_path = {tuple(loc.path): loc.leading_comments for loc in f.source_code_info.location}
        pkg = f.package

        def walk_msg(msg: descriptor_pb2.DescriptorProto, prefix: str, path: tuple[int, ...]) -> None:
            name = f"{prefix}.{msg.name}"
            out[name] = _clean(by_path.get(path, ""))
            for i, fld in enumerate(msg.field):
                out[f"{name}.{fld.name}"] = _clean(by_path.get((*path, 2, i), ""))
            for i, nested in enumerate(msg.nested_type):
                walk_msg(nested, name, (*path, 3, i))

        for i, msg in enumerate(f.message_type):
            walk_msg(msg, pkg, (4, i))
        for i, svc in enumerate(f.service):
            sname = f"{pkg}.{svc.name}"
            out[sname] = _clean(by_path.get((6, i), ""))
            for j, m in enumerate(svc.method):
                out[f"{sname}.{m.name}"] = _clean(by_path.get((6, i, 2, j), ""))
    return {k: v for k, v in out.items() if v}


def _clean(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().splitlines()).strip()


# ------------------------------------------------------------------ schemas


class _Builder:
    def __init__(self, comments: dict[str, str]) -> None:
        self.comments = comments
        self.schemas: dict[str, Schema] = {}

    def describe(self, schema: Schema, full_name: str) -> Schema:
        text = self.comments.get(full_name)
        if text:
            schema["description"] = text
        return schema

    # -- responses: every field rendered; presence -> nullable, unless set_in_responses
    def output_ref(self, desc: descriptor.Descriptor) -> Schema:
        name = desc.name
        if name not in self.schemas:
            self.schemas[name] = {}  # placeholder against recursion
            props = {f.name: self.describe(self.output_field(f), f.full_name) for f in desc.fields}
            self.schemas[name] = self.describe(
                {"type": "object", "properties": props, "required": [f.name for f in desc.fields],
                 "additionalProperties": False},
                desc.full_name,
            )
        return {"$ref": f"#/components/schemas/{name}"}

    def output_field(self, f: FD) -> Schema:
        if is_map(f):
            return _map_schema(f)
        if f.is_repeated:
            s: Schema = {"type": "array", "items": self.output_value(f)}
            if field_policy(f).null_when_empty:
                s["type"] = ["array", "null"]
            return s
        s = self.output_value(f)
        if f.has_presence and not field_policy(f).set_in_responses:
            s = _nullable(s)
        if is_output_only(f):
            s["readOnly"] = True
        return s

    def output_value(self, f: FD) -> Schema:
        if f.type == FD.TYPE_MESSAGE:
            full = f.message_type.full_name
            if full == _TIMESTAMP:
                return {"type": "string", "format": "date-time"}
            if full == _STRUCT:
                return {"type": "object"}
            if full == _ERROR_OBJECT:  # rendered in the spec's shape (levy.app.error_objects)
                return {"$ref": "#/components/schemas/JsonApiError"}
            return self.output_ref(f.message_type)
        return _scalar(f)

    # -- requests: no read-only fields, no unknown properties, null allowed
    def input_ref(self, desc: descriptor.Descriptor, exclude: frozenset[str] = frozenset(),
                  suffix: str = "Input") -> Schema:
        name = desc.name if desc.name.endswith("Input") else desc.name + suffix
        if name not in self.schemas:
            self.schemas[name] = {}
            props: dict[str, Schema] = {}
            for f in desc.fields:
                if is_output_only(f) or f.name in exclude:
                    continue
                if f.type == FD.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.FieldMask":
                    continue
                props[f.name] = self.describe(self.input_field(f), f.full_name)
            self.schemas[name] = self.describe(
                {"type": "object", "properties": props, "additionalProperties": False}, desc.full_name
            )
        return {"$ref": f"#/components/schemas/{name}"}

    def input_field(self, f: FD) -> Schema:
        p = field_policy(f)
        if is_map(f):
            return _nullable(_map_schema(f))
        if f.is_repeated:
            item = self.input_value(f, p)
            if p.per_item_errors:  # each item succeeds or fails on its own, inside a 200
                item = {"anyOf": [item, {"description": "Any other value: the item is reported as `failed` "
                                                        "with its errors in the 200 response."}]}
            s: Schema = {"type": ["array", "null"], "items": item}
            if p.max_items:
                s["maxItems"] = p.max_items
            return s
        return _nullable(self.input_value(f, p))

    def input_value(self, f: FD, p: options_pb2.FieldPolicy) -> Schema:
        if f.type == FD.TYPE_MESSAGE:
            full = f.message_type.full_name
            if full == _TIMESTAMP:
                return {"type": "string", "format": "date-time",
                        "description": "RFC 3339 date-time; a plain date (YYYY-MM-DD) is read as midnight UTC."}
            if full == _STRUCT:
                return {"type": "object"}
            return self.input_ref(f.message_type)
        s = _scalar(f)
        if f.type == FD.TYPE_STRING:
            if p.max_length:
                s["maxLength"] = p.max_length
            if p.min_length:
                s["minLength"] = p.min_length
                s["pattern"] = r"\S"  # not blank: whitespace alone is refused
        return s


def _map_schema(f: FD) -> Schema:
    """A ``map<string, scalar>`` field: a JSON object of its values."""
    return {"type": "object", "additionalProperties": _scalar(f.message_type.fields_by_name["value"])}


def _scalar(f: FD) -> Schema:
    t = f.type
    if t == FD.TYPE_STRING:
        return {"type": "string"}
    if t == FD.TYPE_BOOL:
        return {"type": "boolean"}
    if t in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return {"type": "number"}
    if t in INT_RANGE:
        lo, hi = INT_RANGE[t]
        return {"type": "integer", "format": "int64" if hi > 2**32 else "int32", "minimum": lo, "maximum": hi}
    if t == FD.TYPE_ENUM:
        return {"type": "string", "enum": [v.name for v in f.enum_type.values]}
    if t == FD.TYPE_BYTES:
        return {"type": "string", "contentEncoding": "base64"}
    raise TypeError(f"unsupported field type {t} of {f.full_name}")  # pragma: no cover


def _nullable(s: Schema) -> Schema:
    if "$ref" in s:
        return {"anyOf": [s, {"type": "null"}]}
    s = dict(s)
    t = s.get("type")
    if isinstance(t, str):
        s["type"] = [t, "null"]
        if "enum" in s:
            s["enum"] = [*s["enum"], None]
    return s


# ------------------------------------------------------------------ operations


def _error_content(status: int, style: int) -> dict[str, Any]:
    if style == options_pb2.ERROR_STYLE_CALCULATION:
        if status == 422:
            return {JSON: {"schema": {"$ref": "#/components/schemas/CalculationValidationError"}}}
        if status == 429:
            return {JSON: {"schema": {"$ref": "#/components/schemas/CalculationDetail"}}}
        if status == 500:
            return {"text/plain": {"schema": {"type": "string"}}}
    return {JSON: {"schema": JSON_API_ERROR}}


def _response_headers(status: int) -> dict[str, Any]:
    h: dict[str, Any] = {
        "X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"},
        "Service-Version": {"$ref": "#/components/headers/Service-Version"},
        "X-RateLimit-Limit": {"$ref": "#/components/headers/X-RateLimit-Limit"},
        "X-RateLimit-Remaining": {"$ref": "#/components/headers/X-RateLimit-Remaining"},
    }
    if status == 429:
        h["Retry-After"] = {"$ref": "#/components/headers/Retry-After"}
    if status == 405:
        h["Allow"] = {"$ref": "#/components/headers/Allow"}
    return h


def _operation(b: _Builder, m: MethodInfo) -> dict[str, Any]:
    req = m.request_cls.DESCRIPTOR
    path_fields = _VAR.findall(m.http_path)
    body = m.http.body
    params: list[dict[str, Any]] = []
    for name in path_fields:
        f = req.fields_by_name[name]
        params.append(b.describe({"name": name, "in": "path", "required": True, "schema": {"type": "string"}},
                                 f.full_name))
    if not body:
        for f in req.fields:
            if f.name in path_fields or f.type == FD.TYPE_MESSAGE or f.is_repeated:
                continue
            schema = _scalar(f)
            if f.name == "limit":
                schema.update(minimum=1, maximum=MAX_LIMIT)
            elif f.type == FD.TYPE_STRING and field_policy(f).max_length:
                schema["maxLength"] = field_policy(f).max_length
            params.append(b.describe({"name": f.name, "in": "query", "required": False, "schema": schema},
                                     f.full_name))
    params.append({"$ref": "#/components/parameters/Service-Version"})
    if m.policy.idempotent:
        params.append({"$ref": "#/components/parameters/Idempotency-Key"})
    if m.full_name == "levy.v1.CalculationService.CreateCalculation":
        params.append({"$ref": "#/components/parameters/X-Include-Unregistered"})

    op: dict[str, Any] = {
        "operationId": m.name,
        "tags": [m.service.rsplit(".", 1)[-1]],
        "summary": (b.comments.get(m.full_name, "").split("\n")[0] or m.name),
        "parameters": params,
    }
    desc = b.comments.get(m.full_name)
    if desc:
        op["description"] = desc
    if body:
        if body == "*":
            schema = b.input_ref(req, exclude=frozenset(path_fields), suffix="Body")
        else:
            schema = b.input_ref(req.fields_by_name[body].message_type)
        limit = m.policy.max_body_bytes
        op["requestBody"] = {
            "required": False,
            "description": f"Largest accepted body: {limit or 'the server-wide limit (LEVY_MAX_BODY_BYTES)'} bytes.",
            "content": {JSON: {"schema": schema}},
        }

    responses: dict[str, Any] = {}
    status = m.success_status
    out = m.response_cls.DESCRIPTOR
    ok: dict[str, Any] = {"description": "Success.", "headers": _response_headers(status)}
    if status != 204 and out.full_name != _EMPTY:
        if out.full_name == _HTTP_BODY:
            ok["content"] = {"application/octet-stream": {"schema": {"type": "string"}}, "text/csv": {"schema": {"type": "string"}}}
        else:
            ok["content"] = {JSON: {"schema": b.output_ref(out)}}
    responses[str(status)] = ok
    errors = [400, 401]
    if m.policy.admin_only:
        errors.append(403)
    errors += [404, 405]
    if body:
        errors += [409, 413]
    errors += [422, 429, 500, 501, 503]
    for code in errors:
        responses[str(code)] = {
            "description": _ERROR_TITLES[code],
            "headers": _response_headers(code),
            "content": _error_content(code, m.policy.error_style),
        }
    op["responses"] = responses
    if not m.policy.public:
        op["security"] = [{"ApiKeyHeader": []}, {"BearerAuth": []}]
    else:  # pragma: no cover - no public methods today
        op["security"] = []
    return op


def _links(b: _Builder, doc: dict[str, Any]) -> None:
    """Stateful links: a create's `id` feeds the operations on `{create path}/{param}`."""
    by_path = {(m.http_method.lower(), m.http_path): m for m in methods()}
    for m in methods():
        if m.http_method != "POST" or m.success_status != 201:
            continue
        out = m.response_cls.DESCRIPTOR
        if "id" not in out.fields_by_name:
            continue
        base_vars = _VAR.findall(m.http_path)
        links: dict[str, Any] = {}
        for (verb, path), target in sorted(by_path.items()):
            if not path.startswith(m.http_path + "/{") or path.count("/") != m.http_path.count("/") + 1:
                continue
            new_var = _VAR.findall(path)[-1]
            params = {v: f"$request.path.{v}" for v in base_vars}
            params[new_var] = "$response.body#/id"
            links[target.name] = {"operationId": target.name, "parameters": params}
        if links:
            doc["paths"][m.http_path]["post"]["responses"]["201"]["links"] = links


def build_document(comments: dict[str, str] | None = None) -> dict[str, Any]:
    b = _Builder(comments or {})
    paths: dict[str, dict[str, Any]] = {}
    for m in methods():
        paths.setdefault(m.http_path, {})[m.http_method.lower()] = _operation(b, m)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Levy",
            "version": __version__,
            "summary": "Open-source US sales tax service: calculations, transactions, customers, products.",
            "description": (
                "Generated from protos/levy/v1 by scripts/gen-protos (levy.transport.openapi). "
                f"API version {CURRENT} (header `Service-Version`). Conventions: docs/api.md."
            ),
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": "/"}],
        "tags": [{"name": s.name, "description": b.comments.get(s.full_name, s.name)} for s in services()],
        "paths": dict(sorted(paths.items())),
        "components": {
            "securitySchemes": {
                "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                                 "description": "An API key (`levy_sk_...`)."},
                "BearerAuth": {"type": "http", "scheme": "bearer",
                               "description": "The same API key as `Authorization: Bearer <key>`."},
            },
            "parameters": _parameters(),
            "headers": _headers(),
            "schemas": {},
        },
    }
    _links(b, doc)
    schemas = dict(sorted(b.schemas.items()))
    schemas.update(_error_schemas())
    schemas["ServiceVersion"] = {"type": "string", "enum": ["", *(str(v) for v in RELEASES)],
                                 "description": "A release of the API (`Service-Version`); empty: the latest."}
    doc["components"]["schemas"] = schemas
    return doc


def _parameters() -> dict[str, Any]:
    return {
        "Service-Version": {
            "name": "Service-Version", "in": "header", "required": False,
            "description": "API version `<name>.YYYY-MM-DD`; omitted or empty: the latest. Any date on or "
                           "after a name's release and not in the future selects that name's newest release "
                           "(the enum lists the releases).",
            # A named schema, so that generators make one type of it, not one per operation.
            "schema": {"$ref": "#/components/schemas/ServiceVersion"},
        },
        "Idempotency-Key": {
            "name": "Idempotency-Key", "in": "header", "required": False,
            "description": "Retries with the same key replay the first response instead of repeating the write. "
                           "Empty: no key. Blank, or reused with a different request: 422.",
            "schema": {"type": "string", "maxLength": MAX_KEY_LENGTH, "pattern": r"^$|\S"},
        },
        "X-Include-Unregistered": {
            "name": "X-Include-Unregistered", "in": "header", "required": False,
            "description": "`true`: also tax locations where the seller is not registered.",
            "schema": {"type": "string", "enum": ["true", "false"]},
        },
    }


def _headers() -> dict[str, Any]:
    return {
        "X-Request-Id": {"required": True, "description": "Identifier of the request, also in the server log.",
                         "schema": {"type": "string"}},
        "Service-Version": {"required": True, "description": "The API version that served the request.",
                            "schema": {"type": "string"}},
        "X-RateLimit-Limit": {"description": "Ceiling of requests in the window.",
                              "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        "X-RateLimit-Remaining": {"description": "Requests left in the window.",
                                  "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        "Retry-After": {"required": True, "description": "Seconds until the limit resets.",
                        "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        "Allow": {"required": True, "description": "Methods the path accepts.", "schema": {"type": "string"}},
    }


def _error_schemas() -> dict[str, Any]:
    return {
        "JsonApiErrorBody": {
            "type": "object",
            "description": "Error body (spec section 7.1).",
            "required": ["errors"],
            "properties": {"errors": {"type": "array", "minItems": 1, "items": {"$ref": "#/components/schemas/JsonApiError"}}},
            "additionalProperties": False,
        },
        "JsonApiError": {
            "type": "object",
            "required": ["status", "code", "title", "detail", "meta"],
            "properties": {
                "status": {"type": "string", "pattern": "^[0-9]{3}$", "description": "HTTP status, as a string."},
                "code": {"type": "string", "description": "Machine-readable error code, for example `validation_error`."},
                "title": {"type": "string"},
                "detail": {"type": "string"},
                "source": {
                    "type": "object",
                    "required": ["pointer"],
                    "properties": {
                        "pointer": {"type": ["string", "null"], "description": "JSON pointer into the body."},
                        "parameter": {"type": "string", "description": "Query parameter or header name."},
                    },
                    "additionalProperties": False,
                },
                "meta": {"type": ["object", "null"], "additionalProperties": True,
                         "description": "What the error concerns, by code (for example `existing_customer_id`)."},
            },
            "additionalProperties": False,
        },
        "CalculationValidationError": {
            "type": "object",
            "description": "422 of the calculation endpoint (spec section 7.2).",
            "required": ["detail"],
            "properties": {
                "detail": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["type", "loc", "msg", "input"],
                        "properties": {
                            "type": {"type": "string"},
                            "loc": {"type": "array", "items": {"type": ["string", "integer"]}},
                            "msg": {"type": "string"},
                            "input": {},
                        },
                        "additionalProperties": False,
                    },
                }
            },
            "additionalProperties": False,
        },
        "CalculationDetail": {
            "type": "object",
            "required": ["detail"],
            "properties": {"detail": {"type": "string"}},
            "additionalProperties": False,
        },
    }


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def served_document() -> bytes:
    """The committed document (``src/levy/data/openapi.json``), as served."""
    return resources.files("levy").joinpath("data/openapi.json").read_bytes()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write Levy's OpenAPI 3.1 document generated from the protos.")
    p.add_argument("--descriptor-set", required=True,
                   help="FileDescriptorSet compiled with --include_source_info (for the descriptions).")
    p.add_argument("--out", action="append", required=True, help="Output file (repeatable).")
    args = p.parse_args(argv)
    with open(args.descriptor_set, "rb") as fh:
        comments = comments_from_descriptor_set(fh.read())
    text = render(build_document(comments))
    for path in args.out:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
