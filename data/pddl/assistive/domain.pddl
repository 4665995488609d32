; Assistive delivery (paper §5.2, Fig. 17): the robot fetches an item from a place and hands
; it to a person. People are places too, so one approach action reaches both.
(define (domain assistive)
  (:requirements :strips :typing)
  (:types
    waypoint item - object
    person - waypoint)
  (:predicates
    (robot-at ?w - waypoint)
    (item-at ?i - item ?w - waypoint)
    (holding ?i - item)
    (hand-empty)
    (has ?p - person ?i - item))

  (:action approach
    :parameters (?from - waypoint ?to - waypoint)
    :precondition (robot-at ?from)
    :effect (and (robot-at ?to) (not (robot-at ?from))))

  (:action pick
    :parameters (?i - item ?w - waypoint)
    :precondition (and (robot-at ?w) (item-at ?i ?w) (hand-empty))
    :effect (and (holding ?i) (not (item-at ?i ?w)) (not (hand-empty))))

  (:action handover
    :parameters (?i - item ?p - person)
    :precondition (and (holding ?i) (robot-at ?p))
    :effect (and (has ?p ?i) (hand-empty) (not (holding ?i)))))
