"""``python -m lbsim`` is the ``lbsim`` command."""

from .cli import main

raise SystemExit(main())
