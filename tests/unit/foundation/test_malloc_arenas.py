"""``levy serve`` caps glibc's malloc arenas (levy.workers.limit_malloc_arenas):
each check runs in a fresh interpreter, since the cap is process-wide."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# Threads that malloc at the same time, then the number of arenas glibc made (malloc_info's <heap> count).
_PROBE = textwrap.dedent("""
    import ctypes, os, sys, tempfile, threading
    from levy.workers import limit_malloc_arenas
    applied = limit_malloc_arenas()
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.fopen.restype = ctypes.c_void_p
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    start = threading.Barrier(12)
    def churn():
        start.wait()
        for _ in range(20000):
            libc.free(libc.malloc(4096))
    threads = [threading.Thread(target=churn) for _ in range(12)]
    for t in threads: t.start()
    for t in threads: t.join()
    path = tempfile.mktemp()
    fp = libc.fopen(path.encode(), b"w"); libc.malloc_info(0, fp); libc.fclose(fp)
    print(applied, open(path).read().count("<heap nr="))
    os.unlink(path)
""")

glibc_only = pytest.mark.skipif(not sys.platform.startswith("linux") or not hasattr(__import__("ctypes").CDLL(None),
                                "gnu_get_libc_version"), reason="glibc only")


def _probe(**env: str) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}
    out = subprocess.run([sys.executable, "-c", _PROBE], env={**clean, **env}, capture_output=True, text=True,
                         check=True).stdout.split()
    return out[0], int(out[1])


@glibc_only
def test_arenas_are_capped_at_two() -> None:
    applied, heaps = _probe()
    assert applied == "True"
    assert heaps <= 2


@glibc_only
def test_the_operators_setting_wins() -> None:
    applied, heaps = _probe(MALLOC_ARENA_MAX="1")
    assert applied == "False"
    assert heaps == 1
    applied, _ = _probe(GLIBC_TUNABLES="glibc.malloc.arena_max=4")
    assert applied == "False"
