"""autograder.probe_calls: a student's exception becomes the right catalogue message, repeatably."""

from __future__ import annotations

import re
from typing import Any

import pytest

from autograder.checks import CheckFailed, StudentCodeError
from autograder.probe_calls import (
    ProbeCaller,
    call,
    clean,
    fail_if_not_implemented,
    raised_name,
    scalar_type,
    student_paths,
)


class Raising:
    task = "t"

    def __init__(self, err: StudentCodeError | None, answer: Any = None):
        self.err, self.answer, self.calls = err, answer, []

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        self.calls.append((probe, kwargs))
        if self.err is not None:
            raise self.err
        return self.answer


def failure(worker: Raising, **kwargs: Any) -> CheckFailed:
    with pytest.raises(CheckFailed) as caught:
        call(worker, "probe", "f(x)", **kwargs)
    return caught.value


def test_an_answer_passes_through_with_the_inputs():
    worker = Raising(None, {"value": 3})
    assert call(worker, "probe", "f(x)", x=1) == {"value": 3}
    assert worker.calls == [("probe", {"x": 1})]


@pytest.mark.parametrize(("probe", "type_name", "key"), [
    ("probe", "NotImplementedError", "common.not_implemented"),
    ("import", "SyntaxError", "common.import_error"),
    ("probe", "ValueError", "common.raised"),
])
def test_each_kind_of_exception_has_its_message(probe, type_name, key):
    err = failure(Raising(StudentCodeError(probe, type_name, "bad <object at 0x7f00aa>", "f.py:3 in f")))
    assert err.key == key
    assert err.params == {"call": "f(x)", "type": type_name, "message": "bad <object>",
                          "where": " (`f.py:3 in f`)"}


def test_hints_pick_a_specific_message_by_text_or_type():
    message = "Can't call numpy() on Tensor that requires grad"
    worker = Raising(StudentCodeError("probe", "RuntimeError", message))
    assert failure(worker, hints={"requires grad": "task.needs_detach"}).key == "task.needs_detach"
    assert failure(worker, hints={"RuntimeError": "task.runtime"}).key == "task.runtime"
    assert failure(worker, hints={"shape": "task.shape"}).key == "common.raised"


def test_scrub_patterns_and_limits():
    caller = ProbeCaller(scrub=(re.compile(r"/tmp/ckpt_\w+"),))
    err = StudentCodeError("probe", "OSError", "no such file /tmp/ckpt_x1y2/model.pt")
    assert caller.error_params(err, "save()")["message"] == "no such file <path>/model.pt"
    assert clean("\x1b[31mred\x1b[0m " + "x" * 400).endswith("...")
    assert len(clean("x" * 400)) == 303


def test_caught_exceptions_and_scalar_types():
    assert raised_name(None) == "no exception"
    assert raised_name({"type": "ValueError", "message": "p must be < 1"}) == "ValueError: p must be < 1"
    fail_if_not_implemented(None, "f()")
    fail_if_not_implemented({"type": "ValueError", "message": ""}, "f()")
    with pytest.raises(CheckFailed) as caught:
        fail_if_not_implemented({"type": "NotImplementedError", "message": "stub"}, "f()")
    assert caught.value.key == "common.not_implemented"
    assert scalar_type({"type": "float"}) is None
    assert scalar_type({"type": "Tensor", "as_float": 2.5}) == "Tensor holding 2.5"
    assert scalar_type({"type": "int"}, want="int") is None


def test_a_path_into_the_workers_task_folder_is_cut_to_the_students_file_name():
    """Issue #46: "Output of your code" shows `unit_rows.py`, not the worker's temporary folder."""
    warning = "unit_rows.py:3: UserWarning: x"
    assert student_paths("/tmp/w1/task-k2_x9/" + warning) == warning
    assert student_paths('File "/var/tmp/task-abc/a.py", line 2') == 'File "a.py", line 2'
    assert student_paths("C:\\Temp\\task-ab12\\a.py") == "a.py"
    untouched = "my task-list: /home/me/notes.txt, 3-task"
    assert student_paths(untouched) == untouched


def test_a_call_key_tells_apart_every_input_that_differs():
    import numpy as np

    from autograder.probe_calls import call_key

    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    one_bit = base.copy()
    one_bit.view(np.uint32)[2, 3] ^= 1
    keys = [
        call_key("forward", {"x": base}),
        call_key("forward", {"x": one_bit}),  # the last bit of one value
        call_key("forward", {"x": base.reshape(4, 3)}),  # same bytes, another shape
        call_key("forward", {"x": base.astype(np.int32)}),
        call_key("backward", {"x": base}),
        call_key("forward", {"x": base, "lr": 0.1}),
        call_key("forward", {"x": [1, 2]}),
        call_key("forward", {"x": [[1, 2]]}),
        call_key("forward", {"x": ["1", 2]}),
        call_key("forward", {"x": "12"}),
    ]
    assert len(set(keys)) == len(keys)
    assert call_key("forward", {"a": 1, "x": base.copy()}) == call_key("forward", {"x": base, "a": 1})


def test_call_once_gives_each_check_its_own_copy_of_one_answer():
    import numpy as np

    from autograder.probe_calls import call_once

    answer = {"values": np.ones(3), "losses": [1.0, 2.0], "shape": (3,), "nested": [{"k": "v"}]}
    worker = Raising(None, answer)
    first = call_once(worker, "train", "train()", x=np.zeros(2))
    first["values"][0] = 9.0
    first["losses"].append(3.0)
    first["nested"][0]["k"] = "changed"
    second = call_once(worker, "train", "train()", x=np.zeros(2))
    assert len(worker.calls) == 1
    assert second["values"].tolist() == [1.0, 1.0, 1.0] and second["losses"] == [1.0, 2.0]
    assert second["nested"] == [{"k": "v"}] and second["shape"] == (3,)
