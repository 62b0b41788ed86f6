"""The in-process runtime session: VM instance, HAL devices, modules, parameters, context."""

from __future__ import annotations

import gc
from pathlib import Path

import iree.runtime as rt

from .errors import UsageError, one_line
from .modules import check_module_specs, module_files
from .stash import StashKey
from .vmfb import loadable_copy

# The HAL device without --device, as in the native tool.
DEFAULT_DEVICE = "local-task"

# The open session of the run (what ireebench_sessionfinish receives).
SESSION = StashKey["Session"]()


def device_uris(config) -> list[str]:
    """The --device values, or the default device."""
    return list(config.getoption("device") or []) or [DEFAULT_DEVICE]


def driver_of(uri: str) -> str:
    """``cuda://0`` -> ``cuda``, ``local-task`` -> ``local-task``."""
    return uri.split("://", 1)[0].split(":", 1)[0]


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
        self.module_paths: list[str] = []  # the --module values, as given
        # Per module: repaired function name -> original (names not valid UTF-8).
        self.renamed_functions: list[dict[str, str]] = []
        self.context = None
        self._parameter_indices: list = []

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
        config = self.config
        module_specs = check_module_specs(config)
        self.instance = rt.VmInstance()
        self.device_uris = device_uris(config)
        for uri in self.device_uris:
            self.devices.append(self._create_device(uri))
        # Private copies: a module rewritten during the run cannot touch them.
        for spec, file in zip(module_specs, module_files(config)):
            self.modules.append(self._load_module(spec, file))
            self.module_paths.append(spec)
        hal_module = rt.create_hal_module(self.instance, devices=self.devices)
        vm_modules = [hal_module]
        parameters = list(config.getoption("parameters") or [])
        if parameters:
            vm_modules.append(self._parameters_module(parameters))
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

    def _create_device(self, uri: str):
        driver = driver_of(uri)
        if driver not in rt.query_available_drivers():
            raise UsageError(
                f"--device={uri}: unknown driver {driver!r} "
                f"(available: {', '.join(rt.query_available_drivers())})"
            )
        try:
            return rt.get_device(uri, cache=False)
        except Exception as exc:  # noqa: BLE001
            raise UsageError(f"--device={uri}: cannot create device: {one_line(exc)}") from None

    def _load_module(self, spec: str, file: str):
        """Loads ``file``, the private copy of ``--module=spec`` (names made decodable)."""
        loadable, renamed = loadable_copy(file)
        self.renamed_functions.append(renamed)
        try:
            return rt.VmModule.mmap(self.instance, loadable)
        except Exception as exc:  # noqa: BLE001
            raise UsageError(
                f"--module={spec}: not a valid IREE module (.vmfb): {one_line(exc)}"
            ) from None

    def _parameters_module(self, specs: list[str]):
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
        """(device id, formatted allocator statistics) per device.

        The id is ``iree_hal_device_id`` (``local-task`` for ``--device=local-task://``),
        which the bindings return as the device's ``repr``; the text is
        ``iree_hal_allocator_statistics_format``'s (the per-heap lines).
        """
        return [(repr(device), device.allocator.formatted_statistics)
                for device in self.devices]

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
