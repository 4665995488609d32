; The four-room flat of data/scenes/house.scene.yaml (Safety Chip tasks). The robot crosses
; the flat room by room: it goes to the middle of a room, then approaches a thing in that
; room. Places are rooms and things; a room is "in" itself.
(define (domain house)
  (:requirements :strips :typing)
  (:types
    place - object
    room thing - place
    item - thing)
  (:predicates
    (at ?p - place)                   ; where the robot stands: a room's middle, or in front of a thing
    (in-room ?p - place ?r - room)    ; which room a place is in
    (hand-empty)
    (holding ?i - item)
    (loose ?i - item)                 ; not shut inside a container
    (inside ?i - item ?c - thing)
    (on ?i - item ?t - thing)
    (surface ?t - thing)              ; things can be put on it
    (container ?c - thing)            ; opens and closes; things can be put inside when open
    (closed ?c - thing)
    (is-open ?c - thing)
    (toggleable ?d - thing)
    (off ?d - thing)
    (switched-on ?d - thing))

  (:action go
    :parameters (?from - place ?to - room)
    :precondition (at ?from)
    :effect (and (at ?to) (not (at ?from))))

  (:action approach
    :parameters (?from - place ?r - room ?to - thing)
    :precondition (and (at ?from) (in-room ?from ?r) (in-room ?to ?r))
    :effect (and (at ?to) (not (at ?from))))

  (:action pick
    :parameters (?i - item ?r - room)
    :precondition (and (at ?i) (in-room ?i ?r) (loose ?i) (hand-empty))
    :effect (and (holding ?i) (not (hand-empty)) (not (in-room ?i ?r)) (not (at ?i)) (at ?r)))

  (:action take-out
    :parameters (?i - item ?c - thing ?r - room)
    :precondition (and (at ?i) (in-room ?i ?r) (inside ?i ?c) (is-open ?c) (hand-empty))
    :effect (and (holding ?i) (not (hand-empty)) (not (inside ?i ?c)) (loose ?i) (not (in-room ?i ?r))
                 (not (at ?i)) (at ?r)))

  (:action place-on
    :parameters (?i - item ?t - thing ?r - room)
    :precondition (and (holding ?i) (at ?t) (surface ?t) (in-room ?t ?r))
    :effect (and (not (holding ?i)) (hand-empty) (on ?i ?t) (in-room ?i ?r)))

  (:action place-in
    :parameters (?i - item ?c - thing ?r - room)
    :precondition (and (holding ?i) (at ?c) (container ?c) (is-open ?c) (in-room ?c ?r))
    :effect (and (not (holding ?i)) (hand-empty) (inside ?i ?c) (not (loose ?i)) (in-room ?i ?r)))

  (:action open
    :parameters (?c - thing)
    :precondition (and (at ?c) (container ?c) (closed ?c) (hand-empty))
    :effect (and (is-open ?c) (not (closed ?c))))

  (:action close
    :parameters (?c - thing)
    :precondition (and (at ?c) (is-open ?c))
    :effect (and (closed ?c) (not (is-open ?c))))

  (:action turn-on
    :parameters (?d - thing)
    :precondition (and (at ?d) (toggleable ?d) (off ?d))
    :effect (and (switched-on ?d) (not (off ?d))))

  (:action turn-off
    :parameters (?d - thing)
    :precondition (and (at ?d) (switched-on ?d))
    :effect (and (off ?d) (not (switched-on ?d)))))
