"""``python -m costmodel.cli``: the ``costmodel`` command."""
from . import main

main()
