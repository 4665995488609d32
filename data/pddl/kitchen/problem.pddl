; Slice the tomato while the robot holds an egg (scene data/scenes/kitchen_task): put the egg
; down on the free table, fetch the knife from the far corner of the counter, go to the
; cutting board and slice.
(define (problem slice-tomato)
  (:domain kitchen)
  (:objects
    start knife_corner board_side - waypoint
    free_table counter_corner cutting_board - place
    tomato egg - food
    knife - tool)
  (:init
    (robot-at start)
    (holding egg)
    (at tomato cutting_board)
    (at knife counter_corner)
    (surface free_table)
    (knife knife)
    (reaches start free_table)
    (reaches knife_corner counter_corner)
    (reaches board_side cutting_board))
  (:goal (sliced tomato)))
