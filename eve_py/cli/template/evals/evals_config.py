"""Settings for this app's evals (`eve-py eval . --model mock`)."""

from eve_py.evals import define_eval_config

config = define_eval_config(max_concurrency=4, timeout_s=120)
