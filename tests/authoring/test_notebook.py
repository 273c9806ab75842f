"""Jupyter notebooks: the nbgrader source notebook (a real nbgrader round trip) and notebook submissions."""

from __future__ import annotations

import ast
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS

from autograder.authoring.build import public_checks
from autograder.authoring.markers import find_regions
from autograder.authoring.source_notebook import build_source_notebook
from autograder.cli.notebook import notebook as notebook_cli
from autograder.errors import ConfigError
from autograder.submissions.cells import SKIPPED, neutralise_magics
from autograder.submissions.files import MAX_FILE_BYTES, MAX_TOTAL_BYTES
from autograder.submissions.notebook import collect_notebook, notebook_files, required_names, write_files

DATA = Path(__file__).resolve().parents[1] / "data" / "notebooks"
VENV_BIN = Path(sys.executable).parent
NBGRADER_TIMEOUT = 150  # seconds for one nbgrader command (the whole round trip takes about a minute)


@pytest.fixture(scope="module")
def source_nb(tmp_path_factory) -> Path:
    return build_source_notebook(ROOT, "nn_module", tmp_path_factory.mktemp("nb") / "nn_module.ipynb")


def _nbg(cell: dict) -> dict:
    return cell["metadata"].get("nbgrader", {})


# -- the source notebook --------------------------------------------------------------------


def test_source_notebook_is_valid_nbformat_v4_with_schema_3_metadata(source_nb, kit):
    nb = nbformat.read(source_nb, as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    assert nb.nbformat == 4 and nb.metadata.kernelspec.name == "python3"
    assignment = kit.assignment("nn_module")
    graded = [c for c in nb.cells if _nbg(c).get("grade")]
    solutions = [c for c in nb.cells if _nbg(c).get("solution")]
    ids = [_nbg(c)["grade_id"] for c in nb.cells if _nbg(c)]
    assert len(ids) == len(set(ids)), "grade_ids are unique"
    assert all(_nbg(c)["schema_version"] == 3 for c in nb.cells if _nbg(c))
    assert [_nbg(c)["grade_id"] for c in solutions] == [t.id for t in assignment.tasks]
    assert [_nbg(c)["grade_id"] for c in graded] == [f"test_{t.id}" for t in assignment.tasks]
    for cell, task in zip(solutions, assignment.tasks, strict=True):
        assert _nbg(cell) == {"grade": False, "grade_id": task.id, "locked": False, "schema_version": 3,
                              "solution": True, "task": False}
        reference = (SOLUTIONS / task.file).read_text(encoding="utf-8")
        assert cell.source == reference.rstrip("\n")
        assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
    for cell, task in zip(graded, assignment.tasks, strict=True):
        assert _nbg(cell) == {"grade": True, "grade_id": f"test_{task.id}", "locked": True,
                              "points": task.points, "schema_version": 3, "solution": False, "task": False}
        assert cell.cell_type == "code" and "assert" in cell.source
        assert "### BEGIN" not in cell.source  # no hidden tests: every check is public
    assert sum(_nbg(c)["points"] for c in graded) == assignment.max_score == 100
    given = nb.cells[1]
    assert _nbg(given)["locked"] and not _nbg(given)["grade"] and "def make_toy" in given.source


def test_header_says_nbgrader_scores_each_task_all_or_nothing(source_nb):
    intro = nbformat.read(source_nb, as_version=4).cells[0]
    assert intro.cell_type == "markdown"
    assert "all of its points or none" in intro.source and "partial credit" in intro.source


def test_source_notebook_cells_are_in_task_order_with_titles(source_nb, kit):
    nb = json.loads(source_nb.read_text(encoding="utf-8"))
    kinds = [c["cell_type"] for c in nb["cells"]]
    assert kinds[:2] == ["markdown", "code"]
    assert kinds[2:] == ["markdown", "code", "code"] * len(kit.assignment("nn_module").tasks)
    describe = "".join(nb["cells"][2]["source"])
    assert describe.startswith("## Task `tinynet`: Your first nn.Module subclass")
    assert "`tinynet.py`, 15 points" in describe
    assert "`class TinyNet(in_features, hidden, out_features)`" in describe
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            ast.parse("".join(cell["source"]))  # every code cell is plain Python


def test_test_cells_are_the_assignments_notebook_files(source_nb, kit):
    assignment = kit.assignment("nn_module")
    nb = json.loads(source_nb.read_text(encoding="utf-8"))
    cells = {_nbg(c)["grade_id"]: "".join(c["source"]) for c in nb["cells"] if _nbg(c).get("grade")}
    folder = SOLUTIONS / "graders" / "notebook"
    assert cells == {f"test_{t.id}": (folder / f"test_{t.id}.py").read_text(encoding="utf-8").rstrip("\n")
                     for t in assignment.tasks}
    assert not [rel for rel in public_checks(assignment.graders) if rel.startswith("notebook/")], \
        "the test cells are in the notebook, not in the students' checks/"


def test_no_notebook_for_an_exam(tmp_path):
    with pytest.raises(ConfigError, match="is an exam"):
        build_source_notebook(ROOT, "nn_module_exam", tmp_path / "exam.ipynb")


def test_build_is_deterministic(tmp_path, source_nb):
    again = build_source_notebook(ROOT, "nn_module", tmp_path / "again.ipynb")
    assert again.read_bytes() == source_nb.read_bytes()


def test_cli_build_and_split(tmp_path):
    runner = CliRunner()
    out = tmp_path / "nb" / "hw.ipynb"
    result = runner.invoke(notebook_cli, ["build", "nn_module", "--out", str(out), "--kit", str(ROOT)])
    assert result.exit_code == 0, result.output
    assert "7 tasks, 100 points" in result.output and out.is_file()
    files = tmp_path / "files"
    result = runner.invoke(notebook_cli, ["split", str(out), "--out", str(files), "--kit", str(ROOT)])
    assert result.exit_code == 0, result.output
    tasks = ("tinynet", "delivery", "counting", "containers", "checkpoint", "dropout", "numpy_forward")
    assert sorted(p.name for p in files.iterdir()) == sorted(f"{t}.py" for t in tasks)
    result = runner.invoke(notebook_cli, ["split", str(DATA / "no_tasks.ipynb"), "--out", str(files)])
    assert result.exit_code != 0 and "no code cell that defines" in result.output
    result = runner.invoke(notebook_cli, ["build", "nope", "--kit", str(ROOT)])
    assert result.exit_code == 2 and "unknown assignment 'nope'" in result.output


# -- the real nbgrader round trip -----------------------------------------------------------


def _nbgrader_env(tmp: Path) -> dict[str, str]:
    """An environment of its own: Jupyter/IPython dirs in `tmp`, a python3 kernel that is this venv."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",  # nbgrader runs `alembic` from PATH
        JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"),
        JUPYTER_DATA_DIR=str(tmp / "jupyter-data"),
        JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"),
        JUPYTER_PATH=str(tmp / "kernel" / "share" / "jupyter"),  # searched first: our python3 kernel
        IPYTHONDIR=str(tmp / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=NBGRADER_TIMEOUT)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _nbgrader_stub(reference: str) -> str:
    """What nbgrader's ClearSolutions should make of a reference file: each region -> the python stub."""
    lines = reference.rstrip("\n").split("\n")
    for region in reversed(find_regions(reference, "reference")):
        stub = [f"{region.indent}# YOUR CODE HERE", f"{region.indent}raise NotImplementedError()"]
        lines[region.begin - 1 : region.end] = stub
    return "\n".join(lines)


def test_real_nbgrader_generate_autograde_and_export(tmp_path, source_nb, kit):
    """nbgrader releases stubs with locked point-carrying tests; the reference scores 100, the stubs 0."""
    pytest.importorskip("nbgrader", reason="pip install nbgrader==0.9.6 (pinned in pyproject.toml)")
    course = tmp_path / "course"
    (course / "source" / "nn_module").mkdir(parents=True)
    (course / "source" / "nn_module" / "nn_module.ipynb").write_bytes(source_nb.read_bytes())
    db = tmp_path / "gradebook.db"
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.course_id = 'torch101'\n"
        f"c.CourseDirectory.db_url = {f'sqlite:///{db}'!r}\n"
        "c.Execute.timeout = 120\n",
        encoding="utf-8",
    )
    env = _nbgrader_env(tmp_path)
    python = str(VENV_BIN / "python")
    _run([python, "-m", "ipykernel", "install", "--prefix", str(tmp_path / "kernel"), "--name", "python3"],
         course, env)
    nbgrader = [str(VENV_BIN / "nbgrader")]
    _run([*nbgrader, "generate_assignment", "nn_module", "--force"], course, env)

    released = course / "release" / "nn_module" / "nn_module.ipynb"
    nb = nbformat.read(released, as_version=4)
    solution_cells = [c for c in nb.cells if _nbg(c).get("solution")]
    assert [_nbg(c)["grade_id"] for c in solution_cells] == [t.id for t in kit.assignment("nn_module").tasks]
    for cell in solution_cells:
        reference = (SOLUTIONS / f"{_nbg(cell)['grade_id']}.py").read_text(encoding="utf-8")
        assert cell.source == _nbgrader_stub(reference)  # every solution region, and nothing else, replaced
        assert "BEGIN SOLUTION" not in cell.source and "torch.save(model.state_dict()" not in cell.source
    tests = [c for c in nb.cells if _nbg(c).get("grade")]
    assert [(_nbg(c)["grade_id"], _nbg(c)["points"]) for c in tests] == [
        ("test_tinynet", 15), ("test_delivery", 20), ("test_counting", 15), ("test_containers", 10),
        ("test_checkpoint", 15), ("test_dropout", 15), ("test_numpy_forward", 10),
    ]
    assert all(_nbg(c)["locked"] and c.metadata.get("editable") is False for c in tests)
    assert all(len(_nbg(c)["checksum"]) == 32 for c in tests)

    for student, notebook in (("reference", source_nb), ("stubs", released)):
        folder = course / "submitted" / student / "nn_module"
        folder.mkdir(parents=True)
        (folder / "nn_module.ipynb").write_bytes(notebook.read_bytes())
    _run([*nbgrader, "autograde", "nn_module", "--force"], course, env)
    _run([*nbgrader, "export", "--to", str(tmp_path / "grades.csv")], course, env)

    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    assert float(rows["reference"]["score"]) == float(rows["reference"]["max_score"]) == 100.0
    assert float(rows["stubs"]["score"]) == 0.0

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}", "torch101") as gradebook:
        for student, full in (("reference", True), ("stubs", False)):
            submitted = gradebook.find_submission_notebook("nn_module", "nn_module", student)
            scores = {grade.name: (grade.score, grade.max_score) for grade in submitted.grades}
            assert len(scores) == 7
            for name, (score, max_score) in scores.items():
                assert score == (max_score if full else 0), (student, name, score)

    autograded = nbformat.read(course / "autograded" / "reference" / "nn_module" / "nn_module.ipynb", 4)
    outputs = [o for c in autograded.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, errors


# -- notebooks as submissions ---------------------------------------------------------------


def test_reference_notebook_maps_to_the_reference_files(source_nb, kit):
    got = collect_notebook(source_nb, ("data.py",), kit.assignment("nn_module"))
    assert got.problem == "" and got.notes == ()
    assignment = kit.assignment("nn_module")
    assert sorted(got.files) == sorted(t.file for t in assignment.tasks)
    for task in assignment.tasks:
        text = got.files[task.file].decode("utf-8")
        assert (SOLUTIONS / task.file).read_text(encoding="utf-8").rstrip() in text
        assert "from data import make_toy" in text  # the given cell's copy becomes the kit's own file
        compile(text, task.file, "exec")


def test_reference_notebook_grades_100_end_to_end(grader, source_nb, tmp_path, kit):
    collected = collect_notebook(source_nb, ("data.py",), kit.assignment("nn_module"))
    folder = tmp_path / "from-notebook"
    write_files(collected, folder)
    result = grader.grade(folder, student="notebook")
    assert result.problem == ""
    assert result.score == result.max_score == 100, [
        (t.task, [c.feedback for c in t.checks if c.score < c.max_score]) for t in result.tasks
    ]


def _lab_notebook() -> dict:
    """A JupyterLab-style notebook without nbgrader metadata, made from the reference solutions by a
    student who splits and merges cells, experiments at the top level and uses magics."""

    def code(source: str) -> dict:
        return {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["ok\n"]}], "source": source}

    ref = {p.stem: p.read_text(encoding="utf-8") for p in SOLUTIONS.glob("*.py")}
    tiny = ref["tinynet"]
    split = tiny.index("def train_tinynet")
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Homework 3\n"]},
        code("%matplotlib inline\n!pip install torch\nimport torch\nfrom torch import nn\n"
             "import numpy as np\nimport matplotlib.pyplot as plt\n" + ref["data"].split('"""', 2)[2]),
        code(tiny[:split]),
        code(tiny[split:] + "\n\nX, y = make_toy()\nmodel = TinyNet(3, 8, 2)\n"
             "losses = train_tinynet(model, X, y)\nplt.plot(losses)\nprint(losses[-1])\n"),
        code(ref["delivery"] + "\nmodel = DeliveryMLP(torch.zeros(3), torch.ones(3))\n"),
        code(ref["counting"] + "\n\n" + ref["containers"]),
        code("%%time\n" + ref["checkpoint"]),
        code(ref["dropout"] + "\nd = Dropout(0.5, np.random.default_rng(0))\nd(np.ones(4))\n"),
        code(ref["numpy_forward"] + "\nprint(linear(np.ones((1, 3)), np.ones((2, 3)), np.zeros(2)))\n"),
        code("!nvidia-smi\nlosses2 = train_tinynet(TinyNet(3, 4, 2), *make_toy())\n"),
    ]
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
            "nbformat": 4, "nbformat_minor": 5}


def test_lab_notebook_without_metadata_is_mapped_by_names_and_grades_100(grader, tmp_path, kit):
    path = tmp_path / "ada.ipynb"
    path.write_text(json.dumps(_lab_notebook()), encoding="utf-8")
    collected = collect_notebook(path, ("data.py",), kit.assignment("nn_module"))
    assert collected.problem == ""
    assert len(collected.files) == 7
    tinynet = collected.files["tinynet.py"].decode()
    assert "# --- notebook cell 3 ---" in tinynet and "# --- notebook cell 4 ---" in tinynet
    assert f"{SKIPPED}model = TinyNet(3, 8, 2)" in tinynet and f"{SKIPPED}plt.plot(losses)" in tinynet
    assert "from data import make_orders" in tinynet and "def make_toy" not in tinynet
    assert "try:\n    import matplotlib.pyplot as plt\nexcept ImportError:" in tinynet
    assert "class FixedMLP" in collected.files["counting.py"].decode()  # one cell, two tasks
    assert "class FixedMLP" in collected.files["containers.py"].decode()
    notes = " ".join(collected.notes)
    assert "cell 4 (for `tinynet.py`): top-level code that is not a definition" in notes
    write_files(collected, tmp_path / "ada")
    result = grader.grade(tmp_path / "ada", student="ada")
    assert result.score == 100, [(t.task, [c.feedback for c in t.checks if c.score < c.max_score])
                                 for t in result.tasks]


def test_required_names_come_from_the_reference_files(kit):
    names = required_names(kit.assignment("nn_module"))
    assert names["tinynet"] == ("TinyNet", "train_tinynet")
    assert names["checkpoint"] == ("save_weights", "load_weights", "load_partial")
    assert names["numpy_forward"] == ("linear", "delivery_forward")


def test_colab_notebook_magics_writefile_and_syntax_errors(kit):
    got = collect_notebook(DATA / "colab_partial.ipynb", ("data.py",), kit.assignment("nn_module"))
    assert got.problem == ""
    assert sorted(got.files) == ["counting.py", "dropout.py", "numpy_forward.py"]
    counting = got.files["counting.py"].decode()
    assert f"{SKIPPED}%%writefile counting.py" in counting  # mapped by its %%writefile target
    assert "pass  # [not run when graded] %time np.maximum(x, 0)" in counting  # shared helper, magic inside
    assert "!pip" not in counting.replace(SKIPPED, "") and "ls -la" not in counting
    assert "try:\n    from google.colab import drive\nexcept ImportError:" in counting
    forward = got.files["numpy_forward.py"].decode()
    assert f"{SKIPPED}open('/tmp/should_never_exist', 'w').write('ran')" in forward
    for name, data in got.files.items():
        if name != "dropout.py":
            compile(data, name, "exec")
    assert not Path("/tmp/should_never_exist").exists()
    notes = "\n".join(got.notes)
    assert "cell 6 (for `dropout.py`) is not valid Python" in notes
    assert "no cell defines `delivery_forward` (needed in `numpy_forward.py`)" in notes
    assert "no cell was found for task(s) tinynet, delivery, containers, checkpoint" in notes


def test_syntax_error_cell_is_graded_as_written(grader, kit, tmp_path):
    got = collect_notebook(DATA / "colab_partial.ipynb", ("data.py",), kit.assignment("nn_module"))
    write_files(got, tmp_path / "colab")
    result = grader.grade(tmp_path / "colab", student="colab")
    assert result.task("dropout").score == 0 and result.task("tinynet").score == 0
    assert result.task("counting").score == result.task("counting").max_score


def test_nbformat_3_notebooks_are_read(kit):
    got = collect_notebook(DATA / "nbformat3.ipynb", (), kit.assignment("nn_module"))
    assert list(got.files) == ["numpy_forward.py"] and "def linear" in got.files["numpy_forward.py"].decode()


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("broken_json.ipynb", ["`broken_json.ipynb` is not a valid notebook", "line 3", "download it again"]),
        ("not_a_notebook.ipynb", ["`not_a_notebook.ipynb` is JSON but not a Jupyter notebook", "nbformat"]),
        ("no_tasks.ipynb", ["`no_tasks.ipynb` has no code cell that defines", "`TinyNet`", ".py files"]),
    ],
)
def test_unusable_notebooks_get_a_clear_problem(kit, name, words):
    got = collect_notebook(DATA / name, ("data.py",), kit.assignment("nn_module"))
    assert got.files == {} and got.problem
    for word in words:
        assert word in got.problem


def test_odd_inputs_never_raise(tmp_path, kit):
    assignment = kit.assignment("nn_module")
    odd_cell = json.dumps({"nbformat": 4, "cells": [{"cell_type": "code", "source": 7}]}).encode()
    for data in (b"", b"\xff\xfe\x00", b"[]", b'{"nbformat": 5}', b'{"nbformat": 4, "cells": {}}',
                 b'{"nbformat": 4, "cells": [1]}', b'{"nbformat": 4, "cells": []}', b"[" * 100000,
                 odd_cell):
        got = notebook_files(data, "x.ipynb", assignment)
        assert got.problem and got.files == {}, data[:40]
    link = tmp_path / "link.ipynb"
    link.symlink_to(DATA / "nbformat3.ipynb")
    assert "is a link" in collect_notebook(link, (), assignment).problem
    assert "not a regular file" in collect_notebook(tmp_path / "missing.ipynb", (), assignment).problem


def test_bom_and_list_sources_are_read(kit):
    lines = ["import numpy as np\n", "def linear(x, W, b):\n", "    return x @ W.T + b\n"]
    nb = {"nbformat": 4, "nbformat_minor": 2, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": lines}]}
    got = notebook_files(b"\xef\xbb\xbf" + json.dumps(nb).encode(), "bom.ipynb", kit.assignment("nn_module"))
    assert list(got.files) == ["numpy_forward.py"]


def test_size_limits(kit):
    assignment = kit.assignment("nn_module")
    huge = b" " * (MAX_TOTAL_BYTES + 1)
    got = notebook_files(huge, "big.ipynb", assignment)
    assert "larger than 16 MB" in got.problem and "Clear Outputs" in got.problem
    big_cell = "def linear(x, W, b):\n    return x @ W.T + b\n" + "#" * MAX_FILE_BYTES
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": big_cell},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "def per_layer(model):\n    return {}\n"}]}
    got = notebook_files(json.dumps(nb).encode(), "cells.ipynb", assignment)
    assert list(got.files) == ["counting.py"]
    assert any("cell 1 was ignored: its code is larger than 1024 KB" in n for n in got.notes)


def test_nbgrader_grade_ids_win_over_names(kit):
    """A solution cell goes to the task its grade_id names, even if it defines another task's names."""
    solution = {"grade": False, "grade_id": "dropout", "locked": False, "schema_version": 3,
                "solution": True, "task": False}
    test = {"grade": True, "grade_id": "test_numpy_forward", "locked": True, "points": 10,
            "schema_version": 3, "solution": False, "task": False}
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {"nbgrader": solution}, "outputs": [], "execution_count": None,
         "source": "def linear(x, W, b):\n    return 0\n"},
        {"cell_type": "code", "metadata": {"nbgrader": test}, "outputs": [], "execution_count": None,
         "source": "def delivery_forward(state, x):\n    return 0\n"},
    ]}
    got = notebook_files(json.dumps(nb).encode(), "ids.ipynb", kit.assignment("nn_module"))
    assert list(got.files) == ["dropout.py"]  # the test cell is never taken as student code


@pytest.mark.parametrize(
    ("source", "expected", "is_python"),
    [
        ("x = 1\n", "x = 1\n", True),
        ('s = """\n%not a magic\n"""\n', 's = """\n%not a magic\n"""\n', True),
        ("%matplotlib inline\nx = 1\n", f"pass  {SKIPPED.strip()} %matplotlib inline\nx = 1\n", True),
        ("files = !ls\n", f"pass  {SKIPPED.strip()} files = !ls\n", True),
        ("def f():\n    !ls\n", f"def f():\n    pass  {SKIPPED.strip()} !ls\n", True),
        ("torch.nn.Linear?\n", f"pass  {SKIPPED.strip()} torch.nn.Linear?\n", True),
        ("%%bash\nrm -rf /\n", "", False),
        ("%%html\n<b>x</b>\n", "", False),
        ("%%capture\nx = 1\n", f"{SKIPPED}%%capture\nx = 1\n", True),
    ],
)
def test_neutralise_magics(source, expected, is_python):
    text, _, python = neutralise_magics(source)
    assert (text, python) == (expected, is_python)
    if python:
        ast.parse(text)


def test_only_definitions_run_when_a_cell_is_imported(kit):
    """Experiments, risky calls and optional imports never break the import of a task file."""
    source = (
        "import torch\nfrom torch import nn\nimport os; import seaborn as sns\nimport wandb\n"
        "DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "LOSS = nn.CrossEntropyLoss()\nSIZES = [3, 16, 8, 1]\n"
        "state = torch.load('weights.pt')\nfh = open('/etc/passwd')\nmodel = TinyNet(3, 8, 2)\n"
        "os.system('echo hi')\nif __name__ == '__main__':\n    print(1)\n"
        "class TinyNet(nn.Module):\n    pass\n\n\ndef train_tinynet(model, X, y, epochs=100, lr=0.05):\n"
        "    return []\n"
    )
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}]}
    got = notebook_files(json.dumps(nb).encode(), "mix.ipynb", kit.assignment("nn_module"))
    text = got.files["tinynet.py"].decode()
    for kept in ("\nDEVICE = torch.device(", "\nLOSS = nn.CrossEntropyLoss()", "\nSIZES = [3, 16, 8, 1]",
                 "\nimport os; import seaborn as sns", "try:\n    import wandb\nexcept ImportError:",
                 "\nclass TinyNet(nn.Module):", "\ndef train_tinynet("):
        assert kept in text, kept
    for dropped in ("state = torch.load('weights.pt')", "fh = open('/etc/passwd')",
                    "model = TinyNet(3, 8, 2)", "os.system('echo hi')", "if __name__ == '__main__':",
                    "    print(1)"):
        assert f"\n{SKIPPED}{dropped}\n" in text, dropped
    compile(text, "tinynet.py", "exec")
