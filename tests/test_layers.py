"""The import rules of the layers (docs/architecture.md), read from the source with ``ast``.

- ``levy.domain`` imports nothing above it (``levy.app``, ``levy.store``, ``levy.transport``,
  ``levy.cli``, ``levy.console``, the generated ``levy.v1``), nor the file adapter
  ``levy.ratefiles.builtin``, and reads no file: no ``open(``, no ``importlib.resources``, no
  ``pathlib``, no ``.read_text()``/``.read_bytes()``/``.open()``/``json.load(``. Reference data
  reaches it as arguments (``levy.store.reference_data``).
- ``levy.app`` outside ``levy.app.handlers`` imports no handler module and no protobuf message
  module of the contract (``levy.v1.*_pb2``), except the few places listed in :data:`APP_KNOWN`, each with why.
- Only ``levy.config`` reads the environment (``os.environ``/``os.getenv``), except the names
  listed in :data:`ENV_KNOWN`, which are not Levy settings.

Each failure names the file, the line and what it imports or calls.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import levy

SRC = Path(levy.__file__).parent

DOMAIN_FORBIDDEN = ("levy.app", "levy.store", "levy.transport", "levy.cli", "levy.console", "levy.v1",
                    "levy.ratefiles.builtin", "levy.server", "levy.config", "importlib.resources", "pathlib")
FILE_READING_ATTRIBUTES = {"read_text", "read_bytes", "open", "iterdir", "write_text", "write_bytes"}

#: (file under src/levy/app, imported module) -> why it is allowed. Keep it short.
APP_KNOWN: dict[tuple[str, str], str] = {
    ("bootstrap.py", "levy.app.handlers"): "the composition root registers the handler modules",
    ("registry.py", "levy.v1"): "the method registry is built from the contract's descriptors",
    ("error_objects.py", "levy.v1.errors_pb2"): "the error body both transports send is a message of the contract",
    ("events.py", "levy.app.handlers.transactions"): "an event's payload is the object as the API renders it",
    ("events.py", "levy.app.handlers.customers"): "an event's payload is the object as the API renders it",
    ("events.py", "levy.app.handlers.filings"): "an event's payload is the object as the API renders it",
    ("events.py", "levy.app.handlers.webhooks"): "an event's payload is the object as the API renders it",
}

#: Environment variables read outside levy.config, and why they are not Config fields.
ENV_KNOWN = {
    "PROMETHEUS_MULTIPROC_DIR": "prometheus_client's own setting, set for the worker processes",
    "MALLOC_ARENA_MAX": "glibc's setting, looked at before the workers start",
    "GLIBC_TUNABLES": "glibc's setting, looked at before the workers start",
    "XDG_CACHE_HOME": "the user's cache directory (XDG), the default place of the address file",
    "LEVY_API_KEY": "the credential of `levy transactions import --url`, a client of a server, not its setting",
}


def _files(package: str) -> Iterator[Path]:
    yield from sorted((SRC / package).rglob("*.py"))


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(SRC.parent)}:{getattr(node, 'lineno', '?')}"


def _imports(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """(node, module) of every import of a file, at any depth (functions included); ``from a import b``
    gives ``a.b`` as well as ``a`` so that a module imported by name is seen."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node, a.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node, node.module
            for a in node.names:
                yield node, f"{node.module}.{a.name}"


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_the_domain_imports_nothing_above_it() -> None:
    found = [f"{_where(path, node)} imports {module}"
             for path in _files("domain")
             for node, module in _imports(ast.parse(path.read_text(encoding="utf-8")))
             if any(_under(module, p) for p in DOMAIN_FORBIDDEN)]
    assert not found, "levy.domain imports above it (pass the values in instead):\n" + "\n".join(sorted(set(found)))


def _file_reads(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            yield node, "open(...)"
        elif isinstance(f, ast.Attribute) and f.attr in FILE_READING_ATTRIBUTES:
            yield node, f".{f.attr}(...)"
        elif isinstance(f, ast.Attribute) and f.attr == "load" and isinstance(f.value, ast.Name) and f.value.id == "json":
            yield node, "json.load(...)"
        elif isinstance(f, ast.Attribute) and f.attr == "files" and isinstance(f.value, ast.Name) \
                and f.value.id == "resources":
            yield node, "resources.files(...)"


def test_the_domain_reads_no_file() -> None:
    found = [f"{_where(path, node)} calls {what}"
             for path in _files("domain")
             for node, what in _file_reads(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, ("levy.domain reads files (read them in levy.store.reference_data and pass the parsed "
                       "values in):\n" + "\n".join(found))


def test_the_application_imports_no_handler_or_message_module_but_the_known_ones() -> None:
    app = SRC / "app"
    found = []
    for path in _files("app"):
        rel = path.relative_to(app).as_posix()
        if rel.startswith("handlers/"):
            continue
        for node, module in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if not (_under(module, "levy.app.handlers") or (_under(module, "levy.v1") and "_pb2" in module)):
                continue
            if any(rel == f and _under(module, m) for f, m in APP_KNOWN):
                continue
            found.append(f"{_where(path, node)} imports {module}")
    assert not found, ("levy.app imports a handler or protobuf message module (take and return plain values; "
                       "handlers translate messages):\n" + "\n".join(sorted(set(found))))


def test_every_known_exception_is_still_needed() -> None:
    app = SRC / "app"
    used = set()
    for path in _files("app"):
        rel = path.relative_to(app).as_posix()
        for _, module in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            used |= {(f, m) for f, m in APP_KNOWN if f == rel and _under(module, m)}
    assert set(APP_KNOWN) <= used, f"APP_KNOWN lists imports no longer made: {sorted(set(APP_KNOWN) - used)}"


def _environment_reads(tree: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "environ":
            target = node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args and (
                node.func.attr == "getenv" or (node.func.attr == "get" and isinstance(node.func.value, ast.Attribute)
                                               and node.func.value.attr == "environ")):
            target = node.args[0]
        elif isinstance(node, ast.Compare) and any(isinstance(c, ast.Attribute) and c.attr == "environ"
                                                   for c in node.comparators):
            target = node.left
        if target is not None:
            yield node, target.value if isinstance(target, ast.Constant) else ast.unparse(target)


def test_only_config_reads_levy_settings_from_the_environment() -> None:
    found = [f"{_where(path, node)} reads {name}"
             for path in sorted(SRC.rglob("*.py")) if path.name != "config.py" or path.parent != SRC
             for node, name in _environment_reads(ast.parse(path.read_text(encoding="utf-8")))
             if name not in ENV_KNOWN]
    assert not found, "settings read outside levy.config (add a Config field):\n" + "\n".join(found)


def test_every_setting_is_in_the_readme_configuration_table() -> None:
    import dataclasses

    from levy.config import Config

    readme = (SRC.parent.parent / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Configuration"):readme.index("## Command line")]
    missing = [f"LEVY_{f.name.upper()}" for f in dataclasses.fields(Config) if f"`LEVY_{f.name.upper()}" not in table]
    assert not missing, f"Config fields missing from README's configuration table: {missing}"
