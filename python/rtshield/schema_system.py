"""The system-file schema's former import path: it lives in :mod:`rtshield.schema.system`
(with the scenario schema, in one package); ``rtshield.schema_system`` stays an alias of
its public names for the code and notebooks that import it."""

from rtshield.schema.system import *  # noqa: F403
