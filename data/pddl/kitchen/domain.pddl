; Kitchen tasks with a single-arm robot: fetch tools, put things down, slice food.
; Objects can only be put down where (surface ?p) holds (e.g. the free table).
(define (domain kitchen)
  (:requirements :strips :typing)
  (:types
    place thing - object
    food tool - thing)
  (:predicates
    (robot-at ?p - place)
    (at ?t - thing ?p - place)
    (holding ?t - thing)
    (hand-empty)
    (surface ?p - place)
    (knife ?t - tool)
    (sliced ?f - food))

  (:action move_to
    :parameters (?from - place ?to - place)
    :precondition (robot-at ?from)
    :effect (and (robot-at ?to) (not (robot-at ?from))))

  (:action pick
    :parameters (?t - thing ?p - place)
    :precondition (and (robot-at ?p) (at ?t ?p) (hand-empty))
    :effect (and (holding ?t) (not (at ?t ?p)) (not (hand-empty))))

  (:action place
    :parameters (?t - thing ?p - place)
    :precondition (and (robot-at ?p) (holding ?t) (surface ?p))
    :effect (and (at ?t ?p) (hand-empty) (not (holding ?t))))

  (:action slice
    :parameters (?f - food ?k - tool ?p - place)
    :precondition (and (robot-at ?p) (at ?f ?p) (holding ?k) (knife ?k))
    :effect (sliced ?f)))
