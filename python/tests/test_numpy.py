"""NumPy without copies, both ways, with the owner kept alive on each side."""
import gc

import numpy as np
import pytest

import ember


@pytest.mark.parametrize("dt,npdt", [(ember.float32, np.float32), (ember.float64, np.float64),
                                     (ember.int64, np.int64), (ember.bool, np.bool_)])
def test_asarray_shares_the_tensors_memory(dt, npdt):
    t = ember.zeros((2, 3), dtype=dt)
    a = np.asarray(t)
    assert a.dtype == npdt and a.shape == (2, 3)
    assert a.ctypes.data == t.data_ptr()
    a[1, 2] = 1
    assert t[1, 2].item() == 1  # a write through NumPy is seen by the tensor
    t.fill_(1)
    assert a.all()  # and the other way


@pytest.mark.parametrize("npdt", [np.float32, np.float64, np.int64, np.bool_])
def test_from_numpy_shares_the_arrays_memory(npdt):
    a = np.zeros((4, 5), dtype=npdt)
    t = ember.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    t[2, 3] = 1
    assert a[2, 3] == 1
    a[0, 0] = 1
    assert t[0, 0].item() == 1


def test_the_array_outlives_the_tensor_and_the_tensor_the_array():
    t = ember.arange(6, dtype=ember.float64)
    a = np.asarray(t)
    del t
    gc.collect()
    ember.zeros(1000)  # reuse freed memory, if any were freed
    assert a.tolist() == [0, 1, 2, 3, 4, 5]

    b = np.arange(6, dtype=np.float64)
    u = ember.from_numpy(b)
    del b
    gc.collect()
    np.zeros(1000)
    assert u.tolist() == [0, 1, 2, 3, 4, 5]
    assert (u * 2).tolist() == [0, 2, 4, 6, 8, 10]


def test_a_view_keeps_the_storage_not_only_the_tensor():
    t = ember.arange(6, dtype=ember.float32).reshape(2, 3)
    view = memoryview(t)
    del t
    gc.collect()
    assert np.asarray(view).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_non_contiguous_tensors_export_their_strides():
    x = ember.arange(12, dtype=ember.float64).reshape(3, 4)
    a = np.asarray(x.t())
    assert a.strides == (8, 32) and a.ctypes.data == x.data_ptr()
    np.testing.assert_array_equal(a, np.arange(12.0).reshape(3, 4).T)
    e = np.asarray(ember.ones(3).unsqueeze(0).expand(2, 3))
    assert e.strides == (0, 8 // 2)  # float32: a broadcast row is read twice


def test_non_contiguous_arrays_come_in_as_strided_views():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, 1::2]
    t = ember.from_numpy(a)
    assert t.shape == (2, 3) and t.stride() == (12, 2)
    np.testing.assert_array_equal(np.asarray(t), a)
    t[1, 1] = -1
    assert a[1, 1] == -1


def test_what_numpy_cannot_share_is_refused_by_name():
    with pytest.raises(ember.Error, match="bfloat16"):
        np.asarray(ember.zeros(2).to(ember.bfloat16))
    with pytest.raises(ember.Error, match="requires grad"):
        np.asarray(ember.zeros(2, requires_grad=True))
    with pytest.raises(ember.Error, match="negative"):
        ember.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(ember.Error, match="int32"):
        ember.from_numpy(np.arange(4, dtype=np.int32))
    ro = np.arange(4.0)
    ro.setflags(write=False)
    with pytest.raises(ember.Error, match="read-only"):
        ember.from_numpy(ro)
    # a copy is always possible
    assert ember.tensor(np.arange(4, dtype=np.int32)).dtype == ember.int64
    assert ember.tensor(ro).tolist() == [0, 1, 2, 3]
