"""The runtime session: VM instance, HAL devices, modules, parameters, context."""

from __future__ import annotations

import gc
import hashlib
import sys
import tempfile
from pathlib import Path

from .errors import UsageError, one_line

# The HAL device without --device, as in the native tool.
DEFAULT_DEVICE = "local-task"


def device_uris(config) -> list[str]:
    """The --device values, or the default device."""
    return list(config.getoption("device") or []) or [DEFAULT_DEVICE]


# --- module files (shared by the session and the native backend) -------------

def check_module_specs(config) -> list[str]:
    """The --module values, each an existing non-empty file or ``-`` (stdin).

    Checked before devices are created, as the native tool loads its modules
    first; raises a one-line UsageError naming the flag and the value.
    """
    specs = list(config.getoption("module") or [])
    if not specs:
        raise UsageError("no user module specified; use --module=file.vmfb")
    for spec in specs:
        if spec == "-":
            continue
        path = Path(spec)
        if path.is_dir():
            raise UsageError(f"--module={spec}: is a directory, not a .vmfb file")
        if not path.is_file():
            raise UsageError(f"--module={spec}: file not found")
        if path.stat().st_size == 0:
            raise UsageError(f"--module={spec}: file is empty")
    return specs


def resolve_module_paths(config, scratch: Path | None) -> list[str]:
    """Sets ``config.resolved_module_paths``: the module files native passes load.

    Paths are made absolute; a ``--module=-`` is read from standard input
    once and saved as ``scratch/stdin.vmfb`` (``scratch`` must be a private
    directory that outlives the native passes; it is only needed for ``-``).
    """
    resolved = []
    for spec in check_module_specs(config):
        if spec != "-":
            resolved.append(str(Path(spec).resolve()))
            continue
        data = sys.stdin.buffer.read()
        if not data:
            raise UsageError("--module=-: standard input is empty")
        copy = Path(scratch) / "stdin.vmfb"
        copy.write_bytes(data)
        resolved.append(str(copy))
    config.resolved_module_paths = resolved
    return resolved


def file_sha256(path) -> str:
    """Hex sha256 of a file (a module, a replay capture), or "" when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return ""
    return digest.hexdigest()


class Session:
    """Owns the VM and HAL state of one run.

    Open it with :meth:`open`; :meth:`close` releases everything in the order
    the runtime needs (context before modules before devices).
    """

    def __init__(self, config):
        self.config = config
        self.instance = None
        self.devices: list = []
        self.device_uris: list[str] = []
        self.modules: list = []
        self.module_paths: list[str] = []
        self.context = None
        self._parameter_indices: list = []
        self._scratch = None  # private temp dir holding a copy of a stdin module

    @property
    def device(self):
        """The first device: inputs and outputs live there."""
        return self.devices[0] if self.devices else None

    @property
    def module(self):
        """The benchmarked module: the last --module."""
        return self.modules[-1]

    @property
    def module_path(self) -> str:
        return self.module_paths[-1]

    def open(self) -> Session:
        import iree.runtime as rt

        config = self.config
        module_specs = check_module_specs(config)
        self.instance = rt.VmInstance()
        self.device_uris = device_uris(config)
        for uri in self.device_uris:
            self.devices.append(self._create_device(rt, uri))
        scratch = None
        if "-" in module_specs:
            self._scratch = tempfile.TemporaryDirectory(prefix="ireebench-")
            scratch = Path(self._scratch.name)
        # Native passes re-run the modules from files; stdin is saved to one.
        files = resolve_module_paths(config, scratch)
        for spec, file in zip(module_specs, files):
            self.modules.append(self._load_module(rt, spec, file))
            self.module_paths.append(spec)
        hal_module = rt.create_hal_module(self.instance, devices=self.devices)
        vm_modules = [hal_module]
        parameters = list(config.getoption("parameters") or [])
        if parameters:
            vm_modules.append(self._parameters_module(rt, parameters))
        vm_modules.extend(self.modules)
        try:
            self.context = rt.VmContext(self.instance, modules=vm_modules)
        except Exception as exc:  # noqa: BLE001 - the runtime raises plain errors
            raise UsageError(
                f"--module={self.module_path}: cannot create a context "
                f"(missing import, or compiled for another device than "
                f"--device={','.join(self.device_uris)}?): {one_line(exc)}"
            ) from None
        return self

    def _create_device(self, rt, uri: str):
        driver = uri.split("://", 1)[0].split(":", 1)[0]
        if driver not in rt.query_available_drivers():
            raise UsageError(
                f"--device={uri}: unknown driver {driver!r} "
                f"(available: {', '.join(rt.query_available_drivers())})"
            )
        try:
            return rt.get_device(uri, cache=False)
        except Exception as exc:  # noqa: BLE001
            raise UsageError(f"--device={uri}: cannot create device: {one_line(exc)}") from None

    def _load_module(self, rt, spec: str, file: str):
        """Loads ``file``, the checked (or, for ``-``, saved) file of ``--module=spec``."""
        try:
            return rt.VmModule.mmap(self.instance, file)
        except Exception as exc:  # noqa: BLE001
            raise UsageError(
                f"--module={spec}: not a valid IREE module (.vmfb): {one_line(exc)}"
            ) from None

    def _parameters_module(self, rt, specs: list[str]):
        providers = []
        for spec in specs:
            scope, _, path = spec.rpartition("=")
            if not Path(path).is_file():
                raise UsageError(f"--parameters={spec}: file not found")
            index = rt.ParameterIndex()
            try:
                index.load(path)
            except Exception as exc:  # noqa: BLE001
                raise UsageError(f"--parameters={spec}: {one_line(exc)}") from None
            self._parameter_indices.append(index)
            providers.append(index.create_provider(scope=scope))
        return rt.create_io_parameters_module(self.instance, *providers)

    def allocator_statistics(self) -> list[tuple[str, str]]:
        """(device uri, formatted allocator statistics) per device."""
        return [
            (uri, device.allocator.formatted_statistics)
            for uri, device in zip(self.device_uris, self.devices)
        ]

    def close(self) -> None:
        # Release in dependency order; the bindings crash at interpreter exit
        # when a device outlives the objects that use it.
        self.context = None
        self.modules.clear()
        self._parameter_indices.clear()
        gc.collect()
        self.devices.clear()
        self.instance = None
        gc.collect()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
