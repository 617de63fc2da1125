"""The course files the judge uses: verified against a manifest, put back after a submission changed them."""

import json

import pytest

from course_lib.grading.running import manifest


def test_manifest_names_what_changed(tmp_path):
    path = manifest.build(tmp_path / "manifest.json")
    manifest.verify(path)
    recorded = json.loads(path.read_text())
    assert "course_lib/grading/running/grader.py" in recorded["files"]
    assert "solutions/ps1_nbody.ipynb" in recorded["files"]
    assert not any("__pycache__" in label for label in recorded["files"])
    recorded["files"]["course_lib/nbody/questions.py"] = "0" * 64
    recorded["files"]["course_lib/nbody/gone.py"] = "0" * 64
    del recorded["files"]["course_lib/grading/core.py"]
    path.write_text(json.dumps(recorded))
    with pytest.raises(manifest.ManifestError) as error:
        manifest.verify(path)
    message = str(error.value)
    for part in ("changed course_lib/nbody/questions.py", "missing course_lib/nbody/gone.py",
                 "added course_lib/grading/core.py", "python -m course_lib.grading manifest"):
        assert part in message
    with pytest.raises(manifest.ManifestError, match="cannot read the course manifest"):
        manifest.verify(tmp_path / "none.json")


def test_changed_and_added_files_are_put_back(tmp_path, monkeypatch):
    package, site = tmp_path / "course_lib", tmp_path / "site-packages"
    (package / "unit" / "__pycache__").mkdir(parents=True)
    site.mkdir()
    (package / "unit" / "questions.py").write_text("QUESTIONS = []\n")
    (package / "unit" / "__pycache__" / "questions.cpython-311.pyc").write_bytes(b"compiled")
    (site / "course.pth").write_text("/somewhere\n")
    monkeypatch.setattr(manifest, "PACKAGE", package)
    monkeypatch.setattr(manifest, "ROOT", tmp_path)
    monkeypatch.setattr(manifest, "_site_dirs", lambda: [str(site)])
    state = manifest.CourseState()
    assert state.restore() == []
    (package / "unit" / "questions.py").write_text("QUESTIONS = []\nFORGED = True\n")
    (package / "unit" / "__pycache__" / "questions.cpython-311.pyc").write_bytes(b"forged")
    (package / "unit" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"forged")
    (site / "zz_hook.pth").write_text("import os\n")
    assert sorted(state.restore()) == ["added site-packages/zz_hook.pth", "changed course_lib/unit/questions.py"]
    assert (package / "unit" / "questions.py").read_text() == "QUESTIONS = []\n"
    assert not (site / "zz_hook.pth").exists()
    assert not list((package / "unit" / "__pycache__").iterdir())  # bytecode written meanwhile: removed
