"""The package version, in one place (``nbspark.__version__``, the manifests, ``--version``)."""

__version__ = "0.1.0"

__all__ = ["__version__"]
