"""Dataset loaders, registered in :data:`kernlearn_cli.registry.datasets`.

``bundled`` (scikit-learn), ``uci`` (the download catalogue of ``catalogue``),
``user`` (GyrB and user files); shared checks live in ``_validate``.
"""

from . import bundled, synthetic, uci, user  # noqa: F401  (registers the loaders)
from .catalogue import catalogue_names, data_home, fetch, verify  # noqa: F401
