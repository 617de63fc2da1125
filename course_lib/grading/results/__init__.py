"""Results: the files a grading run writes and the instructor's tools read.

The grades CSV and each student's feedback (:mod:`.report`), the tests CSV with one row per
student and test (:mod:`.details`), and the safe text and atomic writes they use. They sit
below both ``running`` (which writes them during a run) and ``reporting`` (which reads them).

May import: the shared core of :mod:`course_lib.grading` (``model``, ``core``, ``protocol``,
``catalog``). Not ``authoring``, ``running`` or ``reporting``.
"""
