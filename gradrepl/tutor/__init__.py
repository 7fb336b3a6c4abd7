"""The tutor: lessons, questions, grading and playback (frontend side: no torch, no sympy).

- lesson.py   the lesson format's loader (lessons/*.md); lesson_model.py, lesson_parser.py
- answers.py  reading answers and kernel descriptions as comparable values
- grading.py  keys computed in the kernel, grades for answers
- lesson_run.py  one lesson for play, learn and lint (LessonRun); lesson_events.py what it says;
  keys.py its keys; lesson_parts.py the parts an interactive frontend hands its face
- asking.py   the question types' words and how typed answers are read
- lint.py     a lesson must pass its own test
- quiz.py, progress.py  review scheduling and the learner's store
"""
