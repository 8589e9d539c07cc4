"""`load_mock_model`: an app's `agent/mock_model.py`, what `--model mock` and the model string `"mock"` mean."""

from __future__ import annotations

from pathlib import Path

from eve_py._loading import ImportTimedOut, LoadFailure, import_timeout, load_module
from eve_py.errors import ModelConfigurationError
from eve_py.models._base import Model

__all__ = ("load_mock_model",)


def load_mock_model(app_dir: str | Path) -> Model:
    """Load `agent/mock_model.py`'s `model` (what `--model mock` uses).

    Raises:
        ModelConfigurationError: The file is missing, fails to import (or does not finish within
            `$EVE_IMPORT_TIMEOUT`, default 5 s), or exports no `Model`.
    """
    app_dir = Path(app_dir)
    path = app_dir / "agent" / "mock_model.py"
    if not path.is_file():
        raise ModelConfigurationError(
            f"--model mock needs {path}, exporting model = MockModel(responder); this app has none"
        )
    loaded = load_module(path, app_dir=app_dir, timeout_s=import_timeout(None))
    if isinstance(loaded, ImportTimedOut):
        raise ModelConfigurationError(
            f"{path} did not finish importing within {loaded.timeout_s:g} s; eve-py stopped waiting for it "
            "(raise the bound with EVE_IMPORT_TIMEOUT)"
        )
    if isinstance(loaded, LoadFailure):
        raise ModelConfigurationError(
            f"{path} failed to import: {type(loaded.error).__name__}: {loaded.error} ({loaded.location})"
        ) from loaded.error
    model = getattr(loaded, "model", None)
    if not isinstance(model, Model):
        raise ModelConfigurationError(f'Expected the export "model" from "{path}" to be a Model such as MockModel(...)')
    return model
