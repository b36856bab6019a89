"""Memory for long runs in one process. What is available, the budget and byte counts for
messages live in :mod:`twostep._validation` (the base layer), so that the model can check a
size before it allocates."""

from __future__ import annotations


def keep_freed_memory() -> bool:
    """Let this process reuse the memory of freed arrays instead of returning it to the system.

    glibc gives every block over 32 MB its own ``mmap`` and unmaps it when freed, so each new
    ``(N, N)`` array of an at-scale task starts on fresh pages, and the kernel zeroes and maps
    them page by page. On the two-core VM of this project that cost the reuse task 1.2 s of
    system time at N = 4000 (about two of its seven products' worth). Here large blocks come
    from the heap, which is never trimmed below 2 GiB of free top, so a task's arrays land on
    pages the task before it used: no page faults after the first task. Returns whether glibc
    took the settings (False off glibc, where nothing changes). For long runs in one process
    (``tools/at_scale.py``, ``benchmarks/bench_at_scale.py``), not for the library.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4          # glibc's malloc.h
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2 ** 31 - 1))
