; Deliver Adriana's medicine from the medicine counter to her.
(define (problem deliver-medicine)
  (:domain assistive)
  (:objects
    start medicine_counter - waypoint
    adriana - person
    medicine - item)
  (:init
    (robot-at start)
    (item-at medicine medicine_counter)
    (hand-empty))
  (:goal (has adriana medicine)))
