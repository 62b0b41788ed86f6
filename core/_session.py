"""The in-process runtime session: VM instance, HAL devices, modules, parameters, context.

Modules are loaded as ``--module_mode`` says (see :mod:`ireebench._modules`);
parameter archives as ``--parameter_mode`` says, with the native tool's
default: ``file`` reads them with the platform's file API as the program
asks (``ParameterIndex.load(mode="file_async")``), so an archive truncated
or rewritten during the run cannot take the process down (a mapped one
would, with SIGBUS); ``preload`` reads each archive whole into memory first.
"""

from __future__ import annotations

import difflib
import gc
import mmap
import os
import stat

import iree.runtime as rt

from ._modules import PARAMETER_MODES, ModuleImage, loader_mode, module_images
from ._vmfb import repaired_names
from .devices import device_uris, driver_of
from .errors import (
    INVALID_ARGUMENT,
    NOT_FOUND,
    UNIMPLEMENTED,
    UsageError,
    one_line,
    runtime_status,
)

# The parameter file formats the runtime reads, by file extension.
PARAMETER_FORMATS = ("irpa", "gguf", "safetensors")


def open_vm_module(instance, image: ModuleImage):
    """``(VmModule, renamed)``: ``image`` loaded for the Python runtime.

    ``renamed`` maps each function name that had to be made decodable to
    the original (see :mod:`ireebench._vmfb`). A preloaded image is loaded
    from its memory without a copy; a mapped one is mapped read-only (the
    bindings' own ``VmModule.mmap`` opens the file for writing, which a
    read-only mount refuses).
    """
    if image.data is not None:
        buffer = image.data
    else:
        with open(image.path, "rb") as handle:
            buffer = mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    repaired, renamed = repaired_names(buffer)
    if repaired is not None:
        copy = mmap.mmap(-1, len(repaired))
        copy[:] = repaired
        buffer = copy
    try:
        return rt.VmModule.wrap_buffer(instance, buffer), renamed
    except Exception as exc:  # noqa: BLE001 - the runtime raises plain errors
        raise UsageError(
            f"--module={image.spec}: not a valid IREE module (.vmfb): {one_line(exc)}",
            status=runtime_status(exc, INVALID_ARGUMENT)) from None


def module_without_device(image: ModuleImage):
    """``(VmModule, renamed)`` of ``image`` loaded in a VM instance of its own, with no
    device: its functions and their signatures, before (or without) a session."""
    return open_vm_module(rt.VmInstance(), image)


def parse_runtime_flag(flag: str) -> None:
    """Hands ``--name=value`` to the IREE runtime's flag registry (process-global:
    the drivers read it when the session creates them).

    :raises ValueError: the runtime does not know the flag, or refuses its value.
    """
    rt.flags.parse_flags(flag)


def check_drivers(config) -> None:
    """Refuses a ``--device`` whose driver is not registered, in one line.

    Asks the runtime's driver registry only (``query_available_drivers``):
    no device is created, so a run of many points checks every point's
    devices before it measures the first. A comma-separated list is one
    device per flag (``--device=a --device=b``), or a sweep's axis
    (``--sweep device=a,b``): the line says both.
    """
    available = rt.query_available_drivers()
    for uri in device_uris(config):
        driver = driver_of(uri)
        if driver in available:
            continue
        hint = ""
        parts = [part.strip() for part in uri.split(",")]
        if len(parts) > 1 and all(driver_of(part) in available for part in parts if part):
            hint = (f"; one device per flag: {' '.join(f'--device={p}' for p in parts)}, or "
                    f"to measure on each in turn: --sweep device={uri}")
        else:
            close = difflib.get_close_matches(driver, available, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"--device={uri}: unknown driver {driver!r} "
                         f"(available: {', '.join(available)}){hint}",
                         status=NOT_FOUND)  # the native tool: "no driver 'x' registered"


def check_parameter_file(spec: str, path: str) -> None:
    """Refuses, in one line that says what ``path`` is, what cannot be an archive.

    The status is the native tool's for the same path: ``NOT_FOUND`` for a
    missing file, ``UNIMPLEMENTED`` when the extension is not a format it
    reads (what it says for ``--parameters=.`` or ``/dev/zero``).
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise UsageError(f"--parameters={spec}: file not found", status=NOT_FOUND) from None
        raise UsageError(f"--parameters={spec}: cannot read: {exc.strerror or one_line(exc)}",
                         status=NOT_FOUND) from None
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    status = INVALID_ARGUMENT if extension in PARAMETER_FORMATS else UNIMPLEMENTED
    formats = ", ".join(f".{name}" for name in PARAMETER_FORMATS)
    if stat.S_ISDIR(mode):
        raise UsageError(f"--parameters={spec}: is a directory, not a parameter archive "
                         f"({formats})", status=status)
    if not stat.S_ISREG(mode):
        raise UsageError(f"--parameters={spec}: not a regular file (a parameter archive "
                         f"is a {formats} file)", status=status)
    if status == UNIMPLEMENTED:
        raise UsageError(f"--parameters={spec}: unsupported file format "
                         f"{'.' + extension if extension else '(no extension)'}; the "
                         f"extension must be one of {formats}", status=status)


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
        # The modules every context of this session starts with (the HAL
        # module, the parameters): a context for another module reuses them.
        self.support_modules: list = []
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
        # Taken before devices are created, as the native tool loads its
        # modules first; a module changed during the run cannot touch them.
        images = module_images(config)
        parameter_mode = loader_mode(config, "parameter_mode", PARAMETER_MODES)
        check_drivers(config)
        self.instance = rt.VmInstance()
        self.device_uris = device_uris(config)
        for uri in self.device_uris:
            self.devices.append(self._create_device(uri))
        for image in images:
            module, renamed = open_vm_module(self.instance, image)
            self.modules.append(module)
            self.renamed_functions.append(renamed)
            self.module_paths.append(image.spec)
        hal_module = rt.create_hal_module(self.instance, devices=self.devices)
        vm_modules = [hal_module]
        parameters = list(config.getoption("parameters") or [])
        if parameters:
            vm_modules.append(self._parameters_module(parameters, parameter_mode))
        self.support_modules = list(vm_modules)
        vm_modules.extend(self.modules)
        try:
            self.context = rt.VmContext(self.instance, modules=vm_modules)
        except Exception as exc:  # noqa: BLE001 - the runtime raises plain errors
            raise UsageError(
                f"--module={self.module_path}: cannot create a context "
                f"(missing import, or compiled for another device than "
                f"--device={','.join(self.device_uris)}?): {one_line(exc)}",
                status=runtime_status(exc)) from None
        return self

    def _create_device(self, uri: str):
        try:
            return rt.get_device(uri, cache=False)
        except Exception as exc:  # noqa: BLE001
            raise UsageError(f"--device={uri}: cannot create device: {one_line(exc)}",
                             status=runtime_status(exc)) from None

    def _parameters_module(self, specs: list[str], mode: str):
        providers = []
        for spec in specs:
            scope, _, path = spec.rpartition("=")
            check_parameter_file(spec, path)
            index = rt.ParameterIndex()
            try:
                if mode == "file":  # read as the program asks, never mapped
                    index.load(path, mode="file_async")
                else:
                    index.load(path, mmap=False)
            except Exception as exc:  # noqa: BLE001
                raise UsageError(f"--parameters={spec}: {one_line(exc)}",
                                 status=runtime_status(exc, INVALID_ARGUMENT)) from None
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
        self.support_modules.clear()
        self._parameter_indices.clear()
        gc.collect()
        self.devices.clear()
        self.instance = None
        gc.collect()
