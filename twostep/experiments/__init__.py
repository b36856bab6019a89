"""The single-run experiments: one draw, the steps, and what is measured on it (a dict of
numpy arrays), each checking its arguments once; the pages sweep them, the scale-out runs them
by name."""
