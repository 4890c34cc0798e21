"""The release version: one module with no imports, so the build (pyproject's dynamic version), the
package root, the cache key and the reports all read the same string without loading anything else."""

__version__ = "0.1.0"
