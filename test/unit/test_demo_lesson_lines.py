"""The learning demo says what the robot learned once, whether the executor's "learning" feedback
carried it, the action result carried it, or both (feedback is a topic and can be lost or late)."""
from raider_ros.cli.demo_learning import LessonLines


def test_result_says_the_lesson_when_feedback_lost():
    lines = LessonLines()
    assert lines.first_time("learned lesson 16: bring a glass of water with the medicine")


def test_feedback_then_result_says_it_once():
    lines = LessonLines()
    report = "learned lesson 16: bring a glass of water with the medicine"
    assert lines.first_time(report)
    assert not lines.first_time(report)
    assert not lines.first_time(report + "  ")


def test_late_feedback_after_result_is_not_said_again():
    lines = LessonLines()
    assert lines.first_time("not learned: the memory node is unavailable")
    assert not lines.first_time("not learned: the memory node is unavailable")


def test_no_feedback_no_lesson_says_nothing():
    lines = LessonLines()
    assert not lines.first_time("")
    assert not lines.first_time("   ")


def test_two_requests_with_different_lessons_both_said():
    lines = LessonLines()
    assert lines.first_time("learned lesson 1: a")
    assert lines.first_time("learned lesson 2: b")
