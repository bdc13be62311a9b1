"""rtshield's version, in a module of its own: every layer may read it, and the
package's ``__init__`` (which sits above them all, as the notebook API's front
door) re-exports it as ``rtshield.__version__``."""

__version__ = "0.1.0"
