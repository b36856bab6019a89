"""Memory on this machine: what is available, the budget, and byte counts for messages.

The functions live in :mod:`twostep._validation` (the base layer), so that the model can
check a size before it allocates; this module is their home for the scale-out layer.
"""

from __future__ import annotations

from .._validation import (LIMIT_ENV, available_memory, check_fits, format_bytes,  # noqa: F401
                           memory_limit)
