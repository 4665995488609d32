; Kitchen tasks with a single-arm robot: fetch tools, put things down, slice food.
; The robot stands at a waypoint and reaches the places listed by (reaches ?w ?p) from there.
; Things can only be put down on a (surface ?p), e.g. the free table.
(define (domain kitchen)
  (:requirements :strips :typing)
  (:types
    waypoint place thing - object
    food tool - thing)
  (:predicates
    (robot-at ?w - waypoint)
    (reaches ?w - waypoint ?p - place)
    (at ?t - thing ?p - place)
    (holding ?t - thing)
    (hand-empty)
    (surface ?p - place)
    (knife ?t - tool)
    (sliced ?f - food))

  (:action move_to
    :parameters (?from - waypoint ?to - waypoint)
    :precondition (robot-at ?from)
    :effect (and (robot-at ?to) (not (robot-at ?from))))

  (:action pick
    :parameters (?t - thing ?p - place ?w - waypoint)
    :precondition (and (robot-at ?w) (reaches ?w ?p) (at ?t ?p) (hand-empty))
    :effect (and (holding ?t) (not (at ?t ?p)) (not (hand-empty))))

  (:action place
    :parameters (?t - thing ?p - place ?w - waypoint)
    :precondition (and (robot-at ?w) (reaches ?w ?p) (holding ?t) (surface ?p))
    :effect (and (at ?t ?p) (hand-empty) (not (holding ?t))))

  (:action slice
    :parameters (?f - food ?k - tool ?p - place ?w - waypoint)
    :precondition (and (robot-at ?w) (reaches ?w ?p) (at ?f ?p) (holding ?k) (knife ?k))
    :effect (sliced ?f)))
