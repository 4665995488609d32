"""The tool layer: every tool of docs/architecture.md, its JSON schema, and bad input."""
import copy
import json
import math

import pytest

from raider_ros.common.tool_contract import ToolResult
from raider_ros.perception.provider import (PersonInfo, ProviderError, RobotInfo, TruthProvider, make_provider,
                                            parse_truth)
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import TOOL_PARAMS, ToolBox, ToolConfig, normalise_relation
from raider_ros.common.vocabulary import RELATIONS
from raider_ros.perception.user_info import UserInfoAnswer
from scene_graph_fixtures import KITCHEN, TRUTH, kitchen_result, perceived, result, synthetic_result


def make(objs=None, relations=None, truth=None, stamp=1.0, **cfg):
    provider = TruthProvider(truth or TRUTH)
    graph = SceneGraph()
    res = kitchen_result() if objs is None else result(objs, relations or [])
    graph.update(res, provider, stamp=stamp)
    return ToolBox(graph, provider, cfg or None), graph, provider


@pytest.fixture
def tb():
    return make()[0]


def ok(tb, name, *args):
    r = tb.call(name, list(args))
    assert isinstance(r, ToolResult)
    assert r.success, r.error
    assert r.error is None and json.loads(r.text) == r.data
    return r.data


def fail(tb, name, *args):
    r = tb.call(name, list(args))
    assert not r.success and r.error, r
    return r


# --------------------------------------------------------------------------- happy paths
def test_object_detection_lists_visible_objects_only(tb):
    assert ok(tb, "object_detection") == ["Apple_1", "Banana_1", "CerealBox_1", "CoffeeMachine_1",
                                          "CounterTop_1", "Mug_1", "Mug_2"]


def test_robot_holding():
    tb, graph, provider = make()
    assert ok(tb, "robot_holding") is None
    truth = copy.deepcopy(TRUTH)
    truth["robot"]["holding"] = "Knife_1"
    provider.update(truth)
    graph.update(kitchen_result(), provider, stamp=2.0)
    assert ok(tb, "robot_holding") == "Knife_1"
    assert tb.call("robot_holding", []).text == '"Knife_1"'


def test_dist_to_target_schema_and_reach(tb):
    d = ok(tb, "dist_to_target", "Mug_1")
    assert set(d) == {"target", "distance_m", "reach_m", "within_reach"}
    assert d["target"] == "Mug_1" and d["reach_m"] == 1.1 and d["within_reach"] is True
    # nearest point of the perceived cloud, measured from the camera optical centre
    pts = KITCHEN[3].points
    assert d["distance_m"] == pytest.approx(min(math.dist(p, (0, 0, 1.3)) for p in pts), abs=1e-3)
    far = ok(tb, "dist_robot_to_obj", "Mug_2")
    assert far["within_reach"] is False and far["distance_m"] > 1.1
    assert ok(tb, "dist_to_target", "Adriana")["target"] == "Person_1"   # a person is a target too


def test_a_type_with_several_instances_answers_for_each(tb):
    d = ok(tb, "dist_to_target", "mug")
    assert [x["target"] for x in d] == ["Mug_1", "Mug_2"]
    assert [x["within_reach"] for x in d] == [True, False]
    states = ok(tb, "get_obj_state", "the mugs")
    assert states == [{"object": "Mug_1", "state": {"clean": True}}, {"object": "Mug_2", "state": {"clean": False}}]


def test_state_and_properties(tb):
    assert ok(tb, "get_obj_state", "apple") == {"object": "Apple_1", "state": {"sliced": False}}
    assert ok(tb, "get_obj_properties", "coffee machine") == {"object": "CoffeeMachine_1", "properties": ["toggleable"]}
    assert ok(tb, "get_obj_properties", "countertop") == {"object": "CounterTop_1", "properties": ["receptacle"]}


def test_check_obj_relationship(tb):
    d = ok(tb, "check_obj_relationship", "on top of", "CounterTop_1")
    assert d == {"relationship": "on top of", "object": "CounterTop_1", "related": ["Apple_1", "Mug_1"],
                 "evidence": {"Apple_1": {"gap_m": 0.0}, "Mug_1": {"gap_m": 0.0}}}
    d = ok(tb, "check_obj_relationship", "to the left of", "the mug_1")
    assert d["relationship"] == "on the left of" and d["related"] == ["Apple_1"]
    assert ok(tb, "check_obj_relationship", "blocking", "Mug_1")["related"] == []
    assert ok(tb, "check_obj_relationship", "on_the_right_of", "coffee machine")["related"] == ["Mug_2"]
    swapped = ok(tb, "check_obj_relationship", "CounterTop_1", "on top of")   # arguments swapped
    assert swapped["relationship"] == "on top of" and swapped["object"] == "CounterTop_1"


def test_relation_names():
    for r in RELATIONS:
        assert normalise_relation(r) == r
        assert normalise_relation(r.upper().replace(" ", "_")) == r
    assert normalise_relation("occluding") == "blocking"
    assert normalise_relation("next to") == "near"
    with pytest.raises(ValueError, match="allowed: inside, on top of"):
        normalise_relation("behind")


def test_dist_between_objs_is_the_gap_between_clouds():
    a = perceived("Box_1", [1.0, 0.0, 0.5], [0.2, 0.2, 0.2])
    b = perceived("Box_2", [1.3, 0.0, 0.5], [0.2, 0.2, 0.2])          # faces 0.10 m apart
    c = perceived("Can_1", [1.0, 0.5, 0.5], [0.1, 0.1, 0.1])
    tb, *_ = make([a, b, c])
    d = ok(tb, "dist_between_objs", "Box_1", "Box_2")
    assert d["objects"] == ["Box_1", "Box_2"] and d["distance_m"] == pytest.approx(0.10, abs=1e-3)
    assert d["centroid_distance_m"] == pytest.approx(0.3, abs=1e-3)
    many = ok(tb, "dist_between_objs", "box", "can")
    assert [x["objects"] for x in many] == [["Box_1", "Can_1"], ["Box_2", "Can_1"]]
    r = fail(tb, "dist_between_objs", "Box_1", "box_1")
    assert "same object" in r.error
    # the type matches two boxes: pairs exclude an object with itself, leaving one answer
    assert ok(tb, "dist_between_objs", "Box_1", "box")["objects"] == ["Box_1", "Box_2"]


def test_people_tools(tb):
    assert ok(tb, "check_humans_around") == ["Person_1", "Person_2"]
    assert ok(tb, "recognize_humans") == {"Person_1": "Adriana", "Person_2": None}
    d = ok(tb, "dist_robot_to_human", "Adriana")
    assert set(d) == {"human", "distance_m"} and d["human"] == "Person_1" and d["distance_m"] > 1.5
    assert ok(tb, "human_hands_free", "Person_2") == {"human": "Person_2", "hands_free": False}
    assert ok(tb, "detect_human_gaze", "adriana") == {"human": "Person_1", "looking_at_robot": False}
    assert [x["human"] for x in ok(tb, "detect_human_gaze", "the person")] == ["Person_1", "Person_2"]
    r = fail(tb, "human_hands_free", "mug")
    assert r.data["error"] == "not found" and "no person" in r.error


def test_unrecognised_person_without_provider_info():
    tb, graph, provider = make(truth={**TRUTH, "people": []})
    assert ok(tb, "recognize_humans") == {"Person_1": None, "Person_2": None}
    r = fail(tb, "detect_human_gaze", "Person_1")
    assert "no information about the gaze of Person_1" in r.error


# --------------------------------------------------------------------------- free path
def test_free_path_ignores_the_counter_under_the_target(tb):
    d = ok(tb, "check_free_path", "Mug_1")
    assert d["free"] is True and d["blocking"] == [] and d["evidence"] == {}
    assert d["path_length_m"] == pytest.approx(math.hypot(0.485, 0.285), abs=0.02)
    assert set(d) >= {"target", "free", "blocking", "evidence"}


def test_free_path_blocked_by_a_chair():
    table = perceived("Table_1", [2.5, 0.0, 0.4], [0.8, 0.8, 0.8], step=0.05)
    cup = perceived("Cup_1", [2.4, 0.0, 0.85], [0.08, 0.08, 0.1])
    chair = perceived("Chair_1", [1.2, 0.1, 0.45], [0.4, 0.4, 0.9], step=0.05)
    book = perceived("Book_1", [1.2, 0.1, 0.92], [0.2, 0.15, 0.04])            # lies on the chair: too high
    side = perceived("Plant_1", [1.2, 1.2, 0.5], [0.3, 0.3, 1.0], step=0.05)   # well off the path
    tb, *_ = make([table, cup, chair, book, side])
    d = ok(tb, "check_free_path", "cup")
    assert d["free"] is False and d["blocking"] == ["Chair_1"]
    assert d["evidence"] == {"Chair_1": {"distance_to_path_m": 0.0}}
    assert d["path_length_m"] == pytest.approx(2.36, abs=0.01) and d["clearance_m"] == 0.3   # to the cup's near edge
    # the table carries the cup: not an obstacle on the way to it
    assert "Table_1" not in d["blocking"]
    # without the chair the path is free; a wider corridor catches the plant
    tb2, *_ = make([table, cup, side])
    assert ok(tb2, "check_free_path", "Cup_1")["free"] is True
    tb3, *_ = make([table, cup, side], path_clearance_m=1.2)
    assert ok(tb3, "check_free_path", "Cup_1")["blocking"] == ["Plant_1"]


def test_free_path_blocked_by_a_person():
    target = perceived("Door_1", [3.0, 0.0, 1.0], [0.1, 0.9, 2.0], step=0.05)
    person = perceived("Person_1", [1.5, 0.2, 0.85], [0.45, 0.35, 1.7], person=True, step=0.1)
    tb, *_ = make([target, person])
    d = ok(tb, "check_free_path", "door")
    assert d["blocking"] == ["Person_1"] and d["free"] is False


# --------------------------------------------------------------------------- special objects
def test_held_object_answers_without_geometry():
    truth = copy.deepcopy(TRUTH)
    truth["robot"]["holding"] = "Knife_1"
    tb, *_ = make(truth=truth)
    assert "Knife_1" not in ok(tb, "object_detection")
    assert ok(tb, "get_obj_properties", "knife") == {"object": "Knife_1", "properties": ["pickupable"]}
    d = ok(tb, "dist_to_target", "knife")
    assert d["held_by_robot"] is True and d["distance_m"] == 0.0 and d["within_reach"] is True
    assert ok(tb, "check_free_path", "Knife_1")["free"] is True
    r = fail(tb, "check_obj_relationship", "near", "knife")
    assert "gripper" in r.error
    assert "gripper" in fail(tb, "dist_between_objs", "knife", "apple").error


def test_known_but_not_visible_says_so():
    tb, graph, provider = make(stamp=1.0)
    graph.update(result([o for o in KITCHEN if o.name != "Mug_1"]), provider, stamp=4.5)
    r = fail(tb, "dist_to_target", "Mug_1")
    assert "not currently visible" in r.error and "3.5 s" in r.error
    assert r.data == {"error": "not visible", "object": "Mug_1", "last_seen_s_ago": 3.5}
    assert "Mug_1" not in ok(tb, "object_detection")
    assert fail(tb, "get_obj_state", "Mug_1").data["error"] == "not visible"
    # "mug" now means the visible one only
    assert ok(tb, "dist_to_target", "mug")["target"] == "Mug_2"


def test_nan_distance_is_a_clear_failure():
    objs = [perceived("Apple_1", [0.45, 0.28, 0.94], [0.08, 0.08, 0.08], distance=float("nan")),
            perceived("Apple_2", [0.5, 0.1, 0.94], [0.08, 0.08, 0.08])]
    tb, *_ = make(objs)
    r = fail(tb, "dist_to_target", "Apple_1")
    assert "no valid depth" in r.error and r.data["error"] == "no depth"
    both = ok(tb, "dist_to_target", "apple")                 # one bad answer does not sink the others
    assert "error" in both[0] and both[1]["within_reach"] is True


def test_object_without_points():
    empty = perceived("Apple_1", [0.45, 0.28, 0.94], [0.08, 0.08, 0.08])
    empty.points = empty.points[:0]
    tb, *_ = make([empty, perceived("Mug_1", [0.53, -0.33, 0.95], [0.09, 0.09, 0.1])])
    assert "no 3-D points for Apple_1" in fail(tb, "dist_between_objs", "apple", "mug").error


# --------------------------------------------------------------------------- bad input
def test_unknown_tool_lists_the_tools(tb):
    r = fail(tb, "open_fridge")
    assert "unknown tool 'open_fridge'" in r.error
    for name in TOOL_PARAMS:
        assert name in r.error
    assert "dist_between_objs(obj1, obj2)" in r.error
    assert not tb.call(None, []).success


@pytest.mark.parametrize("name, args", [
    ("dist_to_target", []), ("dist_to_target", ["Mug_1", "Mug_2"]), ("object_detection", ["x"]),
    ("check_obj_relationship", ["Mug_1"]), ("dist_between_objs", ["Mug_1"]),
])
def test_wrong_argument_count_shows_the_signature(tb, name, args):
    r = fail(tb, name, *args)
    assert f"{name}({', '.join(TOOL_PARAMS[name])}) takes {len(TOOL_PARAMS[name])} argument" in r.error
    assert f"got {len(args)}" in r.error


def test_argument_shapes(tb):
    assert tb.call("dist_to_target", "Mug_1").success                       # a bare string
    assert tb.call("dist_to_target", {"target": "Mug_1"}).success           # by name
    assert tb.call("object_detection", None).success
    assert "unknown argument 'obj'" in tb.call("dist_to_target", {"obj": "Mug_1"}).error
    assert "missing argument 'target'" in tb.call("dist_to_target", {}).error
    assert "must be a name" in tb.call("dist_to_target", [["Mug_1"]]).error
    assert "must be a name" in tb.call("dist_to_target", [None]).error
    assert "must be a list" in tb.call("dist_to_target", 5).error


def test_unknown_object_gives_closest(tb):
    r = fail(tb, "get_obj_state", "pear")
    assert r.data["error"] == "not found" and r.data["query"] == "pear" and isinstance(r.data["closest"], list)
    assert json.loads(r.text) == r.data
    r = fail(tb, "dist_to_target", "mug_3")
    assert {"Mug_1", "Mug_2"} <= set(r.data["closest"])


def test_unknown_relation_names_the_allowed_ones(tb):
    r = fail(tb, "check_obj_relationship", "behind", "Mug_1")
    assert "allowed: inside, on top of, above, below, on the left of, on the right of, blocking, near" in r.error
    assert r.data["allowed"] == list(RELATIONS)


def test_empty_graph():
    graph, provider = SceneGraph(), TruthProvider()
    tb = ToolBox(graph, provider)
    assert ok(tb, "object_detection") == [] and ok(tb, "check_humans_around") == []
    assert ok(tb, "recognize_humans") == {}
    r = fail(tb, "dist_to_target", "mug")
    assert "no perception frame yet" in r.error and r.data["closest"] == []
    assert "no robot information" in fail(tb, "robot_holding").error


def test_provider_failures_do_not_crash():
    class Broken:
        def state(self, i): raise RuntimeError("classifier crashed")
        def properties(self, i): return []
        def people(self): return []
        def robot(self): return RobotInfo(0, 0, 0, 1.1, None)

    graph = SceneGraph()
    graph.update(kitchen_result(), TruthProvider(TRUTH), stamp=0.0)
    tb = ToolBox(graph, Broken())
    assert ok(tb, "get_obj_state", "Mug_1")["state"] == {"clean": True}   # from the graph
    with pytest.raises(RuntimeError):
        graph.update(kitchen_result(), Broken(), stamp=1.0)


def test_config():
    assert ToolConfig.from_dict({"path_clearance_m": 0.5}).path_clearance_m == 0.5
    with pytest.raises(ValueError, match="unknown key 'clearance'"):
        ToolConfig.from_dict({"clearance": 1})
    with pytest.raises(ValueError, match="positive"):
        ToolConfig.from_dict({"max_results": 0})
    with pytest.raises(ValueError, match="bad value"):
        ToolConfig.from_dict({"path_clearance_m": "wide"})
    tb, *_ = make(max_results=1)
    assert ok(tb, "dist_to_target", "mug")["target"] == "Mug_1"


# --------------------------------------------------------------------------- user information
def test_retrieve_user_information_with_a_retriever():
    class Fake:
        def query(self, q):
            return UserInfoAnswer(q, "The user likes bananas.", 0.81234, 0)

    graph = SceneGraph()
    tb = ToolBox(graph, None, user_info=Fake())
    assert ok(tb, "retrieve_user_information", "favourite fruit") == \
        {"query": "favourite fruit", "answer": "The user likes bananas.", "score": 0.812}
    assert "empty" in fail(tb, "retrieve_user_information", "  ").error


def test_retrieve_user_information_missing_corpus(tmp_path):
    tb = ToolBox(SceneGraph(), None, {"user_info_corpus": str(tmp_path / "none.yaml")})
    r = fail(tb, "retrieve_user_information", "favourite fruit")
    assert "user information unavailable" in r.error and "no such user-information corpus" in r.error


# --------------------------------------------------------------------------- provider
def test_truth_provider():
    p = make_provider("sim", TRUTH)
    assert p.state("Mug_2") == {"clean": False}
    assert p.properties("Apple_1") == ["pickupable", "sliceable"]
    assert p.people()[0] == PersonInfo("Person_1", "Adriana", False, True)
    assert p.robot() == RobotInfo(0.0, 0.0, 0.0, 1.1, None)
    assert p.object_type("CoffeeMachine_1") == "CoffeeMachine"
    with pytest.raises(KeyError):
        p.state("Pear_1")
    p.state("Mug_2")["clean"] = True                   # a copy: the provider is unchanged
    assert p.state("Mug_2") == {"clean": False}
    v = p.version
    truth = copy.deepcopy(TRUTH)
    truth["objects"][3]["state"]["clean"] = False
    p.update(truth)
    assert p.state("Mug_1") == {"clean": False} and p.version == v + 1


def test_truth_provider_from_scene():
    from raider_ros.sim.scene import parse_scene
    scene = parse_scene({"format": "raider-scene/1", "name": "s",
                         "robot": {"pose": [1, 2, 90], "reach": 0.9, "holding": "Mug_1"},
                         "objects": [{"id": "Mug_1", "type": "Mug", "center": [1, 1, 1], "size": [0.1, 0.1, 0.1],
                                      "properties": ["dirtyable"], "state": {"clean": True}}],
                         "people": [{"id": "Person_1", "name": "Ana", "center": [2, 0, 0.85],
                                     "state": {"looking_at_robot": True}}]})
    p = TruthProvider.from_scene(scene)
    assert p.state("Mug_1") == {"clean": True} and p.properties("Mug_1") == ["dirtyable"]
    assert p.robot() == RobotInfo(1.0, 2.0, 90.0, 0.9, "Mug_1")
    assert p.people() == [PersonInfo("Person_1", "Ana", True, True)]


@pytest.mark.parametrize("bad, msg", [
    (None, "expected a mapping"),
    ({"robot": 3}, "robot: expected a mapping"),
    ({"robot": {"pose": [0, 0]}}, r"robot.pose: expected \[x, y, yaw_deg\]"),
    ({"robot": {"pose": [0, 0, "a"]}}, r"robot.pose\[2\]: expected a number"),
    ({"robot": {}, "objects": [{"type": "Mug"}]}, r"objects\[0\]: expected a mapping with a string id"),
    ({"robot": {}, "objects": [{"id": "Mug_1", "state": {"clean": "yes"}}]}, r"objects\[0\] \(Mug_1\).state.clean"),
    ({"robot": {}, "objects": [{"id": "Mug_1", "properties": "pickupable"}]}, "properties: expected a list"),
    ({"robot": {}, "people": [{"id": "P", "state": []}]}, r"people\[0\] \(P\).state"),
])
def test_bad_truth(bad, msg):
    with pytest.raises(ProviderError, match=msg):
        parse_truth(bad)


def test_provider_registry_and_not_ready():
    with pytest.raises(ProviderError, match="unknown provider backend 'clip'; known: sim"):
        make_provider("clip")
    p = TruthProvider()
    assert not p.ready
    with pytest.raises(ProviderError, match="no simulator truth"):
        p.robot()
    # the graph tolerates a provider that has nothing yet
    g = SceneGraph()
    g.update(kitchen_result(), p, stamp=0.0)
    assert g.snapshot().robot is None and g.snapshot().node("Mug_1")["state"] is None


def test_every_tool_answers_on_a_large_graph():
    res = synthetic_result(50, 2500)
    res.objects["Person_1"] = perceived("Person_1", [3.0, 2.0, 0.85], [0.45, 0.35, 1.7], person=True, step=0.1)
    truth = {"robot": {"pose": [0, 0, 0]},
             "objects": [{"id": n, "type": o.label, "properties": ["pickupable"], "state": {}}
                         for n, o in res.objects.items() if not o.is_person],
             "people": [{"id": "Person_1", "name": "Ana", "state": {"looking_at_robot": True}}]}
    provider = TruthProvider(truth)
    graph = SceneGraph()
    graph.update(res, provider, stamp=0.0)
    tb = ToolBox(graph, provider, user_info=type("F", (), {"query": lambda self, q: UserInfoAnswer(q, "A", 1.0, 0)})())
    args = {"target": "Mug_2", "obj": "Bowl_3", "obj1": "Apple_1", "obj2": "Pan_5", "relationship": "near",
            "human": "Ana", "query": "x"}
    for name, params in TOOL_PARAMS.items():
        r = tb.call(name, [args[p] for p in params])
        assert r.success, (name, r.error)
    near = tb.call("check_obj_relationship", ["near", "Bowl_3"]).data
    assert near["related"] == sorted({r.subject for r in res.relations if r.relation == "near" and r.object == "Bowl_3"},
                                     key=lambda s: (s.rsplit("_", 1)[0], int(s.rsplit("_", 1)[1])))


# --------------------------------------------------------------------------- end to end
def test_tools_on_a_rendered_scene():
    """Renderer -> perception pipeline -> scene graph -> tools, on a scene built here."""
    from raider_ros.sim.render import render
    from raider_ros.sim.scene import parse_scene
    from raider_ros.perception.pipeline import PerceptionPipeline

    def box(i, t, center, size, **kw):
        return {"id": i, "type": t, "shape": "box", "center": center, "size": size, **kw}

    scene = parse_scene({
        "format": "raider-scene/1", "name": "e2e",
        "robot": {"pose": [0, 0, 0], "reach": 1.7, "holding": "Knife_1"},
        "objects": [
            box("Table_1", "Table", [2.2, 0.0, 0.375], [0.8, 1.0, 0.75], properties=["receptacle"]),
            box("Mug_1", "Mug", [2.0, 0.2, 0.8], [0.09, 0.09, 0.1], properties=["pickupable", "dirtyable"],
                state={"clean": False}),
            box("Mug_2", "Mug", [0.9, -0.6, 0.05], [0.09, 0.09, 0.1], properties=["pickupable"]),
            box("Chair_1", "Chair", [1.2, 0.1, 0.45], [0.45, 0.45, 0.9], properties=["moveable"]),
            box("Knife_1", "Knife", [2.0, -0.3, 0.76], [0.2, 0.03, 0.02], properties=["pickupable"]),
        ],
        "people": [{"id": "Person_1", "name": "Adriana", "center": [2.5, -1.4, 0.85],
                    "state": {"looking_at_robot": True, "hands_free": False}}],
    })
    frame = render(scene)
    res = PerceptionPipeline("sim").process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera,
                                            robot_xy=(0.0, 0.0))
    provider = TruthProvider.from_scene(scene)
    graph = SceneGraph()
    graph.update(res, provider)
    tb = ToolBox(graph, provider)

    assert ok(tb, "object_detection") == ["Chair_1", "Mug_1", "Mug_2", "Table_1"]
    assert ok(tb, "robot_holding") == "Knife_1"
    assert ok(tb, "check_humans_around") == ["Person_1"]
    assert ok(tb, "recognize_humans") == {"Person_1": "Adriana"}
    assert ok(tb, "detect_human_gaze", "Adriana")["looking_at_robot"] is True
    mugs = ok(tb, "dist_to_target", "mug")
    assert [m["target"] for m in mugs] == ["Mug_1", "Mug_2"]
    assert mugs[0]["within_reach"] is False and mugs[1]["within_reach"] is True
    # distance from the camera (1.3 m up) to the nearest visible point of the floor mug
    assert mugs[1]["distance_m"] == pytest.approx(math.dist((0, 0, 1.3), (0.855, -0.555, 0.1)), abs=0.05)
    path = ok(tb, "check_free_path", "Mug_1")
    assert path["free"] is False and "Chair_1" in path["blocking"] and "Table_1" not in path["blocking"]
    assert ok(tb, "check_free_path", "Mug_2")["free"] is True
    assert "Mug_1" in ok(tb, "check_obj_relationship", "on top of", "table")["related"]
    gap = ok(tb, "dist_between_objs", "Mug_1", "Table_1")["distance_m"]
    assert gap < 0.03                                       # the mug stands on the table
    assert ok(tb, "get_obj_state", "knife") == {"object": "Knife_1", "state": {}}
    assert ok(tb, "dist_to_target", "knife")["held_by_robot"] is True
    assert fail(tb, "get_obj_state", "pear").data["error"] == "not found"
    json.loads(graph.to_json())


# --------------------------------------------------------------------------- people out of view
def test_a_person_seen_earlier_is_still_known_when_out_of_view():
    person = perceived("Person_1", [1.8, -1.0, 0.85], [0.45, 0.35, 1.7], person=True, step=0.1)
    truth = copy.deepcopy(TRUTH)
    truth["people"] = [{"id": "Person_1", "name": None, "center": [1.8, -1.0, 0.85], "size": [0.45, 0.35, 1.7],
                        "state": {"looking_at_robot": False, "hands_free": True}}]
    things = [o for o in kitchen_result().objects.values() if not o.is_person]
    tb, graph, provider = make([*things, person], truth=truth)
    assert ok(tb, "check_humans_around") == ["Person_1"]
    graph.update(result(things), provider, stamp=2.0)             # the robot turned away
    assert ok(tb, "check_humans_around") == ["Person_1"]
    assert ok(tb, "recognize_humans") == {"Person_1": None}
    d = ok(tb, "dist_robot_to_human", "Person_1")
    assert d["in_view"] is False and d["distance_m"] == pytest.approx(math.hypot(1.8, 1.0) - 0.175, abs=0.15)
    assert ok(tb, "check_free_path", "Person_1")["target"] == "Person_1"
    fail(tb, "detect_human_gaze", "Person_1")                      # gaze needs the person in view
    truth["people"][0]["name"] = "Adriana"                         # she said who she is
    provider.update(truth)
    assert ok(tb, "recognize_humans") == {"Person_1": "Adriana"}
