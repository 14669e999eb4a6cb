"""Answers to the course's exercises, written as students write them: right ones in other
styles than the teacher's (MXNet's own idioms among them) and wrong ones or shortcuts, each
with words its check's message must hold. tests/test_exercise_answers.py runs them in the
notebooks' own kernels."""
