"""Pure NumPy kernels on the segment layout (no pandas, no validation): the engine seam."""
