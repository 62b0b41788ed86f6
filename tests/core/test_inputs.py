"""The --input grammar: every form parses on the host and reaches the function."""

import numpy as np
import pytest
from ireebench.errors import UsageError
from ireebench.inputs import Null, Scalar, Tensor, parse_inputs


def one(spec, types=("r",)):
    values = parse_inputs([spec], list(types))
    assert len(values) == 1
    return values[0]


@pytest.mark.parametrize(
    "spec, shape, expected",
    [
        ("2x2xi32=1 2 3 4", (2, 2), [1, 2, 3, 4]),
        ("2x2xi32=1,2,3,4", (2, 2), [1, 2, 3, 4]),
        ("2x2xi32=[[1 2][3 4]]", (2, 2), [1, 2, 3, 4]),
        ("2x2xi32=[1, 2], [3, 4]", (2, 2), [1, 2, 3, 4]),
        ("2x2xi32", (2, 2), [0, 0, 0, 0]),
        ("2x2xi32=", (2, 2), [0, 0, 0, 0]),
        ("2x2xi32=7", (2, 2), [7, 7, 7, 7]),
        ("4xi32=0x10 0xff -0x1 3", (4,), [16, 255, -1, 3]),
        ("i32=5", (), [5]),
    ],
)
def test_tensor_forms(spec, shape, expected):
    value = one(spec)
    assert isinstance(value, Tensor)
    assert value.array.shape == shape
    assert value.array.reshape(-1).tolist() == expected


def test_float_and_bf16():
    assert one("3xf32=1.5 -2 1e3").array.tolist() == [1.5, -2.0, 1000.0]
    bf16 = one("2xbf16=1 -2")
    assert bf16.element_type.name == "bf16" and bf16.array.dtype == np.uint16
    assert bf16.array.tolist() == [0x3F80, 0xC000]


@pytest.mark.parametrize("spec, cconv, value", [
    ("42", "i", 42), ("-7", "I", -7), ("-3.14", "f", -3.14), ("0x20", "i", 32),
])
def test_scalars(spec, cconv, value):
    parsed = one(spec, cconv)
    assert isinstance(parsed, Scalar) and parsed.value == pytest.approx(value)


def test_null():
    assert isinstance(one("(null)"), Null)
    assert isinstance(one("(ignored)", "i"), Null)


def test_binary_files(tmp_path):
    data = tmp_path / "data.bin"
    np.arange(6, dtype=np.float32).tofile(data)
    first, second = parse_inputs([f"2xf32=@{data}", f"4xf32=+{data}"], ["r", "r"])
    assert first.array.tolist() == [0, 1]
    assert second.array.tolist() == [2, 3, 4, 5]
    again = parse_inputs([f"2xf32=@{data}", f"2xf32=@{data}"], ["r", "r"])
    assert again[1].array.tolist() == [0, 1]  # @ starts from the beginning


def test_npy_files(tmp_path):
    path = tmp_path / "arrays.npy"
    with open(path, "wb") as handle:
        np.save(handle, np.array([1, 2], dtype=np.int32))
        np.save(handle, np.ones((2, 2), dtype=np.float32))
        np.save(handle, np.array([True, False]))
    first, second = parse_inputs([f"@{path}", f"+{path}"], ["r", "r"])
    assert first.array.tolist() == [1, 2] and first.element_type.name == "si32"
    assert second.array.shape == (2, 2)
    everything = parse_inputs([f"*{path}"], ["r", "r", "r"])
    assert [v.element_type.name for v in everything] == ["si32", "f32", "i1"]


@pytest.mark.parametrize("dtype, name", [
    (np.int8, "si8"), (np.int16, "si16"), (np.int32, "si32"), (np.int64, "si64"),
    (np.uint8, "ui8"), (np.uint16, "ui16"), (np.uint32, "ui32"), (np.uint64, "ui64"),
    (np.bool_, "i1"), (np.float16, "f16"), (np.float32, "f32"), (np.float64, "f64"),
])
def test_npy_element_types_carry_signedness(tmp_path, dtype, name):
    """As IREE's numpy_io.c reads a descr: kind i is signed, u unsigned, b boolean."""
    path = tmp_path / "a.npy"
    np.save(path, np.zeros(3, dtype=dtype))
    assert one(f"@{path}").element_type.name == name


def test_npy_zero_d_arrays_stay_zero_d(tmp_path):
    """A 0-d array is a 0-d tensor (`f32=2.5`), not `1xf32`."""
    path = tmp_path / "scalars.npy"
    with open(path, "wb") as handle:
        np.save(handle, np.float32(2.5))
        np.save(handle, np.array(7, dtype=np.int32))
    scalar, integer = parse_inputs([f"*{path}"], ["r", "r"])
    assert scalar.array.shape == () and scalar.array.item() == 2.5
    assert scalar.element_type.name == "f32"
    assert integer.array.shape == () and integer.element_type.name == "si32"
    assert one("f32=1.5").array.shape == ()


@pytest.mark.parametrize("spec", [
    "2x2xq32=1", "2xZxi32=1", "2xi32=1 2 3", "2xi32=a b", "2xi32=[1 2", "2xi8=300",
])
def test_malformed_is_a_usage_error(spec):
    with pytest.raises(UsageError) as info:
        one(spec)
    assert spec in str(info.value)



@pytest.mark.parametrize("specs, types, reason", [
    (["2xi32=1 2 3"], ["r"], "value count mismatch"),
    ([""], ["r"], "no value specified"),
    (["1", "2"], ["i"], "function expected fewer input values"),
    (["&2xf32"], ["i"], "function signature mismatch"),
    (["@/nonexistent/missing.npy"], ["r"], "file not found"),
])
def test_errors_name_the_flag_given(specs, types, reason):
    """--expected_output shares the grammar; its errors name --expected_output."""
    with pytest.raises(UsageError) as info:
        parse_inputs(specs, types, flag="expected_output")
    assert str(info.value).startswith(f"--expected_output={specs[-1]}: {reason}")


def test_every_form_through_the_cli(compile_mlir, ireebench, tmp_path):
    """Inputs of each form reach the function (its outputs echo them)."""
    path = compile_mlir("simple")
    bin_file = tmp_path / "b.bin"
    np.array([5, -6, 7], dtype=np.int8).tofile(bin_file)
    npy_file = tmp_path / "a.npy"
    np.save(npy_file, np.array([[1, 2], [3, 4]], dtype=np.int32))
    result = ireebench(f"--module={path}", "--device=local-sync", "--function=ints",
                       f"--input=@{npy_file}", f"--input=3xi8=@{bin_file}",
                       "--benchmark_min_time=2x", "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    assert "2x2xsi32=[1 2][3 4]" in result.stdout  # int32 in a .npy is signed
    assert "3xi8=5 -6 7" in result.stdout
    result = ireebench(f"--module={path}", "--device=local-sync", "--function=ints",
                       "--input=2x2xi32=[[0x10 2][3, 4]]", "--input=3xi8=9",
                       "--benchmark_min_time=2x", "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    assert "2x2xi32=[16 2][3 4]" in result.stdout and "3xi8=9 9 9" in result.stdout
    result = ireebench(f"--module={path}", "--device=local-sync", "--function=scalar",
                       "--input=21", "--benchmark_min_time=2x", "--enable_output_processing")
    assert result.returncode == 0, result.stderr
    assert "result[0]: i32=42" in result.stdout
