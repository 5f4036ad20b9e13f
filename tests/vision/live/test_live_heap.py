"""A long session keeps its heap steady (glibc): the thresholds are fixed once, and freed memory
can be handed back at any time."""

import ctypes.util
import platform

import pytest

from meeplecam.vision.live import heap


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_the_heap_thresholds_are_fixed_on_glibc():
    assert heap.steady_heap()
    heap.release_freed_memory()


def test_without_glibc_nothing_is_done(monkeypatch):
    heap._libc.cache_clear()
    heap.steady_heap.cache_clear()
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: "no-such-libc.so")
    try:
        assert heap.steady_heap() is False
        heap.release_freed_memory()  # a no-op, never an error
    finally:
        heap._libc.cache_clear()
        heap.steady_heap.cache_clear()
