"""``python -m playforge …`` and the ``playforge`` script: the command line of the Rust
binary, with the Ray executor installed for ``--ray ADDRESS``."""

from __future__ import annotations

import sys
from typing import Optional, Sequence


def main(argv: Optional[Sequence[str]] = None) -> int:
    from . import _core
    from .ray_executor import connect

    _core.set_ray_connector(connect)
    args = list(sys.argv[1:] if argv is None else argv)
    return _core.main(["playforge", *args])


if __name__ == "__main__":
    sys.exit(main())
