"""The tutor: lessons, questions, grading and playback (frontend side: no torch, no sympy).

- lesson.py   the lesson format's model and loader (lessons/*.md)
- answers.py  reading answers and kernel descriptions as comparable values
- grading.py  keys computed in the kernel, grades for answers
- player.py   scripted playback, step by step
- lint.py     a lesson must pass its own test
- quiz.py, progress.py  review scheduling and the learner's store
"""
