"""evo-jax: a chunk of candidates' episodes compiled into one JAX function, as an evo plugin.

Selected with `episodes.vectorize = "jax"` for the environments `evo list-environments` shows
(`gymnax/...`, `brax/...`). Importing this package imports no JAX: jax is loaded when a chunk
is first evaluated or a JAX environment first made.
"""

from evo_jax.config import JaxVectorizeConfig
from evo_jax.environments import ENVIRONMENTS, EnvironmentEntry
from evo_jax.vectorizer import JaxVectorizer

__all__ = ["ENVIRONMENTS", "EnvironmentEntry", "JaxVectorizeConfig", "JaxVectorizer"]
