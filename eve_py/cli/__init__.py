"""The `eve-py` command line."""
