"""Pure NumPy kernels on the segment layout (no validation, no I/O): what an engine runs.

They take plain arrays and typed parameters and trust them; pandas is used only for
its O(n) hash primitives (``factorize``, ``duplicated``) where NumPy has only sorts.
"""
