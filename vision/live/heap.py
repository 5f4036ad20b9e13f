"""A steady heap for long sessions (glibc only; a no-op elsewhere).

A long session decodes frames and cuts cells of many sizes. glibc keeps freed blocks in its
arenas, and it raises its mmap threshold to the size of every large block freed, so after a few
games the live loop's large, short-lived arrays (frames, rectified boards) are carved from the
heap instead of mapped and unmapped: the process grew by about 1 MB a game on the synthetic demo
table while the memory Python holds stayed flat (tracemalloc). :func:`steady_heap` fixes the
thresholds; :func:`release_freed_memory` hands freed memory back now and then.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

M_TRIM_THRESHOLD = -1  # mallopt parameters, from glibc's malloc.h
M_MMAP_THRESHOLD = -3
THRESHOLD = 128 * 1024  # glibc's own starting value of both


@cache
def _libc():
    """The C library when it is glibc (it has ``mallopt`` and ``malloc_trim``), else None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - macOS and musl lack them
    except (OSError, AttributeError):
        return None
    return libc


@cache
def steady_heap() -> bool:
    """Fix glibc's mmap and trim thresholds for this process (once); False without glibc."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD)) and bool(
        libc.mallopt(M_TRIM_THRESHOLD, THRESHOLD)
    )


def release_freed_memory() -> None:
    """Hand freed memory back to the system (glibc's ``malloc_trim``)."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
