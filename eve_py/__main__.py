"""`python -m eve_py` runs the command line."""

from eve_py.cli._main import main

raise SystemExit(main())
