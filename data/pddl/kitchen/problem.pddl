; Slice the tomato on the counter while the robot holds an egg: put the egg down on the
; free table, fetch the knife, come back and slice.
(define (problem slice-tomato)
  (:domain kitchen)
  (:objects
    counter free_table drawer - place
    tomato egg - food
    knife - tool)
  (:init
    (robot-at counter)
    (holding egg)
    (at tomato counter)
    (at knife drawer)
    (surface free_table)
    (knife knife))
  (:goal (sliced tomato)))
