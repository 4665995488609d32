; The flat as the scene starts: the robot in the kitchen corner with an empty hand, the
; fridge, wardrobe and cabinet closed, every appliance off. Task cases replace the goal.
(define (problem house-errand)
  (:domain house)
  (:objects
    kitchen bedroom living_room bathroom - room
    start countertop stove fridge bed nightstand lamp wardrobe sofa coffeetable tvstand tv plant
      toilet bathtub vanity sink cabinet - thing
    knife apple mug milk book remote vase towel medicine hairdryer - item)
  (:init
    (at start) (hand-empty)
    (in-room kitchen kitchen) (in-room bedroom bedroom) (in-room living_room living_room)
    (in-room bathroom bathroom)
    (in-room start kitchen) (in-room countertop kitchen) (in-room stove kitchen) (in-room fridge kitchen)
    (in-room knife kitchen) (in-room apple kitchen) (in-room mug kitchen) (in-room milk kitchen)
    (in-room bed bedroom) (in-room nightstand bedroom) (in-room lamp bedroom) (in-room wardrobe bedroom)
    (in-room book bedroom)
    (in-room sofa living_room) (in-room coffeetable living_room) (in-room tvstand living_room)
    (in-room tv living_room) (in-room plant living_room) (in-room remote living_room)
    (in-room vase living_room)
    (in-room toilet bathroom) (in-room bathtub bathroom) (in-room vanity bathroom) (in-room sink bathroom)
    (in-room cabinet bathroom) (in-room towel bathroom) (in-room medicine bathroom)
    (in-room hairdryer bathroom)
    (loose knife) (loose apple) (loose mug) (loose book) (loose remote) (loose vase) (loose towel)
    (loose hairdryer)
    (inside milk fridge) (inside medicine cabinet)
    (on knife countertop) (on apple countertop) (on mug countertop) (on book bed) (on remote coffeetable)
    (on vase coffeetable) (on towel vanity) (on hairdryer cabinet)
    (surface countertop) (surface bed) (surface nightstand) (surface sofa) (surface coffeetable)
    (surface tvstand) (surface vanity) (surface bathtub) (surface sink)
    (container fridge) (container wardrobe) (container cabinet)
    (closed fridge) (closed wardrobe) (closed cabinet)
    (toggleable stove) (toggleable lamp) (toggleable tv) (toggleable hairdryer)
    (off stove) (off lamp) (off tv) (off hairdryer))
  (:goal (at toilet)))
