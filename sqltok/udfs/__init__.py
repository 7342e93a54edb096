"""DuckDB functions over Arrow batches: thin wrappers that hand Arrow buffers to the Cython code."""
from .define import register_udfs

__all__ = ["register_udfs"]
